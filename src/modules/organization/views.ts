import type { IInvitation, IOrganization, ITeam } from "../../db/entities/index.ts";

/** The records the organization routes answer (better-auth's organization plugin shapes; docs/organizations.md). */

function parseMetadata(raw: string | null | undefined): Record<string, unknown> | null {
  if (!raw) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function publicOrganization(o: IOrganization) {
  return { id: o.id, name: o.name, slug: o.slug, logo: o.logo ?? null, metadata: parseMetadata(o.metadata), createdAt: o.createdAt.toISOString() };
}

export type PublicOrganization = ReturnType<typeof publicOrganization>;

/** A member row as the SQL of members.service.ts reads it (with its user's public fields when joined). */
export interface MemberRow {
  id: string;
  organizationId: string;
  userId: string;
  role: string;
  createdAt: Date;
  user?: { id: string; name: string; email: string; image: string | null };
}

export function publicMember(m: MemberRow) {
  return {
    id: m.id,
    organizationId: m.organizationId,
    userId: m.userId,
    role: m.role,
    createdAt: m.createdAt.toISOString(),
    ...(m.user ? { user: { id: m.user.id, name: m.user.name, email: m.user.email, image: m.user.image ?? null } } : {}),
  };
}

export type PublicMember = ReturnType<typeof publicMember>;

export function publicInvitation(i: IInvitation) {
  return {
    id: i.id,
    organizationId: i.organization.id,
    email: i.email,
    role: i.role,
    status: i.status,
    inviterId: i.inviterId,
    teamId: i.teamId ?? null,
    expiresAt: i.expiresAt.toISOString(),
    createdAt: i.createdAt.toISOString(),
  };
}

export type PublicInvitation = ReturnType<typeof publicInvitation>;

export function publicTeam(t: ITeam) {
  return { id: t.id, name: t.name, organizationId: t.organization.id, createdAt: t.createdAt.toISOString(), updatedAt: t.updatedAt ? t.updatedAt.toISOString() : null };
}
