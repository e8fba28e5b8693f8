import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Invitation, Member, Team, type IOrganization } from "../../db/entities/index.ts";
import { publicInvitation, publicMember, publicOrganization, publicTeam, type MemberRow } from "./views.ts";

/**
 * A page of members with their users' public fields: the page's ids first (a walk of the order's
 * index, deep offsets included, never a join sorted whole), then those members joined to their users.
 */
export async function membersWithUsers(em: EntityManager, where: object, opts: { limit: number; offset: number; orderBy: Record<string, "asc" | "desc"> }): Promise<MemberRow[]> {
  const ids = (await em.find(Member, where, { fields: ["id"], orderBy: opts.orderBy, limit: opts.limit, offset: opts.offset, disableIdentityMap: true })).map((m) => m.id);
  if (ids.length === 0) return [];
  const rows = await em.find(Member, { id: { $in: ids } }, { populate: ["user"], fields: ["id", "organization", "role", "createdAt", "user.id", "user.name", "user.email", "user.image"] as never, orderBy: opts.orderBy, disableIdentityMap: true });
  return rows.map((m) => {
    const u = m.user.getEntity();
    return { id: m.id, organizationId: m.organization.id, userId: u.id, role: m.role, createdAt: m.createdAt, user: { id: u.id, name: u.name, email: u.email, image: u.image ?? null } };
  });
}

/**
 * get-full-organization's answer (better-auth's shape): the organization with its members (the
 * first `membersLimit`, default `membershipLimit`), its pending invitations, and its teams when
 * teams are on.
 */
export async function fullOrganization(app: App, em: EntityManager, org: IOrganization, membersLimit: number | undefined) {
  const cfg = app.config.organization;
  const members = await membersWithUsers(em, { organization: org.id }, { limit: membersLimit ?? cfg.membershipLimit, offset: 0, orderBy: { createdAt: "asc", id: "asc" } });
  const invitations = await em.find(Invitation, { organization: org.id, status: "pending" }, { orderBy: { createdAt: "asc" }, disableIdentityMap: true });
  const teams = cfg.teams.enabled ? await em.find(Team, { organization: org.id }, { orderBy: { createdAt: "asc" }, disableIdentityMap: true }) : null;
  return {
    ...publicOrganization(org),
    members: members.map(publicMember),
    invitations: invitations.map(publicInvitation),
    ...(teams ? { teams: teams.map(publicTeam) } : {}),
  };
}
