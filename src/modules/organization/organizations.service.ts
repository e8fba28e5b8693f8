import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Invitation, Member, Organization, OrganizationRole, Team, TeamMember, User } from "../../db/entities/index.ts";
import { LockMode, UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { actorOf, clearActiveOrganization, recordAudit, setActiveContext, uuidv7, type RequestInfo, type ResolvedSession } from "../../core/index.ts";
import { assertMemberMay, findOrganization, requireMembership, targetOrganizationId } from "./access.ts";
import { fullOrganization } from "./full-organization.ts";
import { membersChanged } from "./member-totals.ts";
import { publicMember, publicOrganization } from "./views.ts";

/**
 * Organizations themselves (better-auth's /organization/create, update, delete, list,
 * check-slug, set-active, get-full-organization; docs/organizations.md). The slug's uniqueness is
 * the unique index's: a taken slug fails the insert, never a read before it.
 */

export interface OrganizationFields {
  name: string;
  slug: string;
  logo?: string | null | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** The insert or update of `write`, with a taken slug as `code` (the unique index's answer). */
async function slugTaken<T>(code: "ORGANIZATION_ALREADY_EXISTS" | "ORGANIZATION_SLUG_ALREADY_TAKEN", write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) throw new AuthError(code, { cause: err });
    throw err;
  }
}

/**
 * Counts the user's memberships against `organization.organizationLimit` with the user's row
 * locked (FOR UPDATE on PostgreSQL; SQLite runs one writer at a time), so concurrent creates and
 * accepts of one user cannot both take the last place.
 */
export async function assertOrganizationRoom(app: App, tx: EntityManager, userId: string): Promise<void> {
  const limit = app.config.organization.organizationLimit;
  if (limit === undefined) return;
  await tx.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, disableIdentityMap: true });
  if ((await tx.count(Member, { user: userId })) >= limit) throw new AuthError("YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS");
}

/** POST /organization/create: the organization, the caller as `creatorRole`, a default team when teams are on; active unless kept. */
export async function createOrganization(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: OrganizationFields & { keepCurrentActiveOrganization?: boolean | undefined }) {
  const cfg = app.config.organization;
  if (!cfg.allowUserToCreateOrganization) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION");
  const now = app.clock.now();
  const userId = auth.user.id;
  return inTransaction(em, async (tx) => {
    await assertOrganizationRoom(app, tx, userId);
    const org = { id: uuidv7(now.getTime()), name: input.name, slug: input.slug, logo: input.logo ?? null, metadata: input.metadata ? JSON.stringify(input.metadata) : null, createdAt: now };
    await slugTaken("ORGANIZATION_ALREADY_EXISTS", () => tx.insert(Organization, org));
    const member = { id: uuidv7(now.getTime()), organization: org.id, user: userId, role: cfg.creatorRole, createdAt: now };
    await tx.insert(Member, member);
    membersChanged(app, tx, org.id, [userId]);
    let teamId: string | null = null;
    if (cfg.teams.enabled && cfg.teams.defaultTeam) {
      teamId = uuidv7(now.getTime());
      await tx.insert(Team, { id: teamId, organization: org.id, name: input.name, createdAt: now, updatedAt: null });
      await tx.insert(TeamMember, { id: uuidv7(now.getTime()), team: teamId, user: userId, createdAt: now });
    }
    if (!input.keepCurrentActiveOrganization) await setActiveContext(app, tx, { id: auth.session.id, userId }, org.id, teamId);
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-create", targetType: "organization", targetId: org.id, metadata: { slug: org.slug } });
    const row = { ...org, logo: org.logo, metadata: org.metadata };
    return { ...publicOrganization(row), members: [publicMember({ id: member.id, organizationId: org.id, userId, role: member.role, createdAt: now })] };
  });
}

/** POST /organization/update: `organization: ["update"]`; a slug another organization holds is 400. */
export async function updateOrganization(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { organizationId?: string | undefined; data: Partial<OrganizationFields> }) {
  const organizationId = targetOrganizationId(auth, input.organizationId, "ORGANIZATION_NOT_FOUND");
  const member = await requireMembership(em, organizationId, auth.user.id, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
  await assertMemberMay(app, em, member, { organization: ["update"] }, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION");
  const { name, slug, logo, metadata } = input.data;
  const changes = {
    ...(name !== undefined ? { name } : {}),
    ...(slug !== undefined ? { slug } : {}),
    ...(logo !== undefined ? { logo } : {}),
    ...(metadata !== undefined ? { metadata: JSON.stringify(metadata) } : {}),
  };
  return inTransaction(em, async (tx) => {
    if (Object.keys(changes).length > 0) await slugTaken("ORGANIZATION_SLUG_ALREADY_TAKEN", () => tx.nativeUpdate(Organization, { id: organizationId }, changes));
    const org = await findOrganization(tx, organizationId);
    if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-update", targetType: "organization", targetId: organizationId, metadata: { fields: Object.keys(changes) } });
    return publicOrganization(org);
  });
}

/**
 * POST /organization/delete: `organization: ["delete"]` (owners). Members, invitations, teams and
 * roles go with it, and every session working in it works in none, in one transaction.
 */
export async function deleteOrganization(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, organizationId: string) {
  if (app.config.organization.disableOrganizationDeletion) throw new AuthError("NOT_FOUND");
  const member = await requireMembership(em, organizationId, auth.user.id, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
  await assertMemberMay(app, em, member, { organization: ["delete"] }, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION");
  return inTransaction(em, async (tx) => {
    const org = await findOrganization(tx, organizationId);
    if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
    await removeOrganizationRows(tx, organizationId);
    membersChanged(app, tx, organizationId, "all");
    await clearActiveOrganization(app, tx, organizationId);
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-delete", targetType: "organization", targetId: organizationId, metadata: { slug: org.slug } });
    return publicOrganization(org);
  });
}

/** The organization and everything in it, children first (no reliance on the dialect's cascades). */
export async function removeOrganizationRows(tx: EntityManager, organizationId: string): Promise<void> {
  const teams = await tx.find(Team, { organization: organizationId }, { fields: ["id"], disableIdentityMap: true });
  if (teams.length > 0) await tx.nativeDelete(TeamMember, { team: { $in: teams.map((t) => t.id) } });
  await tx.nativeDelete(Team, { organization: organizationId });
  await tx.nativeDelete(Invitation, { organization: organizationId });
  await tx.nativeDelete(OrganizationRole, { organization: organizationId });
  await tx.nativeDelete(Member, { organization: organizationId });
  await tx.nativeDelete(Organization, { id: organizationId });
}

/** GET /organization/list: the caller's organizations, oldest first. */
export async function listOrganizations(em: EntityManager, userId: string) {
  const memberships = await em.find(Member, { user: userId }, { populate: ["organization"], orderBy: { createdAt: "asc", id: "asc" }, disableIdentityMap: true });
  return memberships.map((m) => publicOrganization(m.organization.getEntity()));
}

/** POST /organization/check-slug: `{ status: true }` when free, else 400 ORGANIZATION_SLUG_ALREADY_TAKEN. */
export async function checkSlug(em: EntityManager, slug: string) {
  const taken = await em.count(Organization, { slug });
  if (taken > 0) throw new AuthError("ORGANIZATION_SLUG_ALREADY_TAKEN");
  return { status: true as const };
}

/**
 * POST /organization/set-active: `null` clears it; an id or slug must be one the caller belongs
 * to (403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION). The session's active team goes with it.
 */
export async function setActiveOrganization(app: App, em: EntityManager, auth: ResolvedSession, input: { organizationId?: string | null | undefined; organizationSlug?: string | undefined }) {
  const self = { id: auth.session.id, userId: auth.user.id };
  if (input.organizationId === null || (!input.organizationId && !input.organizationSlug && !auth.session.activeOrganizationId)) {
    if (auth.session.activeOrganizationId || auth.session.activeTeamId) await setActiveContext(app, em, self, null, null);
    return null;
  }
  let org = input.organizationId ? await findOrganization(em, input.organizationId) : null;
  if (!input.organizationId && input.organizationSlug) org = await em.findOne(Organization, { slug: input.organizationSlug }, { disableIdentityMap: true });
  if (!input.organizationId && !input.organizationSlug) org = await findOrganization(em, auth.session.activeOrganizationId!);
  if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
  await requireMembership(em, org.id, auth.user.id, "NOT_A_MEMBER_OF_THE_ORGANIZATION");
  if (auth.session.activeOrganizationId !== org.id) await setActiveContext(app, em, self, org.id, null);
  return publicOrganization(org);
}

/** GET /organization/get-full-organization: by id, slug or the active one (null when none); members, invitations, teams. */
export async function getFullOrganization(app: App, em: EntityManager, auth: ResolvedSession, input: { organizationId?: string | undefined; organizationSlug?: string | undefined; membersLimit?: number | undefined }) {
  const ref = input.organizationSlug ?? input.organizationId ?? auth.session.activeOrganizationId;
  if (!ref) return null;
  const org = input.organizationSlug ? await em.findOne(Organization, { slug: input.organizationSlug }, { disableIdentityMap: true }) : await findOrganization(em, ref);
  if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
  await requireMembership(em, org.id, auth.user.id, "NOT_A_MEMBER_OF_THE_ORGANIZATION");
  return fullOrganization(app, em, org, input.membersLimit);
}

/** The id of the organization a slug names; 400 ORGANIZATION_NOT_FOUND. */
export async function organizationIdBySlug(em: EntityManager, slug: string): Promise<string> {
  const org = await em.findOne(Organization, { slug }, { fields: ["id"], disableIdentityMap: true });
  if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
  return org.id;
}
