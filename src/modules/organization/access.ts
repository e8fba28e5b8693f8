import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Member, Organization, OrganizationRole, type IOrganization } from "../../db/entities/index.ts";
import { AuthError, type ErrorCode } from "../../errors.ts";
import { isUuid, membershipOf, organizationGrantsSchema, rolesGrant, splitRoles, type Grants, type PermissionRequest, type ResolvedSession } from "../../core/index.ts";
import { LockMode } from "../../db/mikro-orm.ts";
import { anyDate, type MaybePromise, type MembershipRow } from "../../db/session-store/index.ts";
import type { MemberRow } from "./views.ts";

/**
 * Who may do what in an organization (docs/organizations.md "Roles"): a membership is one lookup
 * on the unique (organization, user) index, and its roles are checked by the kernel's one
 * permission checker (core/permissions.ts rolesGrant) against the configured roles, then the
 * organization's dynamic roles when those are on.
 */

/** The organization a request names: `organizationId` given, else the session's active one; else `code`. */
export function targetOrganizationId(auth: ResolvedSession, organizationId: string | null | undefined, code: ErrorCode = "NO_ACTIVE_ORGANIZATION"): string {
  const id = organizationId || auth.session.activeOrganizationId;
  if (!id) throw new AuthError(code);
  return id;
}

export function memberRow(m: { id: string; organization: { id: string }; user: { id: string }; role: string; createdAt: Date }): MemberRow {
  return { id: m.id, organizationId: m.organization.id, userId: m.user.id, role: m.role, createdAt: m.createdAt };
}

const MEMBERSHIP_SQL = "select id, role, created_at from members where organization_id = ? and user_id = ?";

/**
 * The user's membership of the organization, or null (anything but a UUID names none): one
 * statement on the unique (organization_id, user_id) index, no entity hydration (has-permission's
 * whole cost, docs/performance.md).
 */
export async function findMembership(em: EntityManager, organizationId: string, userId: string): Promise<MemberRow | null> {
  if (!isUuid(organizationId)) return null;
  const rows = await em.getConnection().execute<{ id: string; role: string; created_at: unknown }[]>(MEMBERSHIP_SQL, [organizationId, userId], "all", em.getTransactionContext());
  const r = rows[0];
  return r ? { id: r.id, organizationId, userId, role: r.role, createdAt: anyDate(r.created_at) } : null;
}

/** The membership, or `code` (better-auth answers each route's own). */
export async function requireMembership(em: EntityManager, organizationId: string, userId: string, code: ErrorCode): Promise<MemberRow> {
  const m = await findMembership(em, organizationId, userId);
  if (!m) throw new AuthError(code);
  return m;
}

/**
 * The caller's membership read outside any transaction, or `code`: the read-only routes' check
 * (has-permission, list-members), no ORM on the way. The prepared lookup on the unique
 * (organization, user) index, remembered by the session's cache entry (core membershipOf).
 */
export function requireMembershipNow(app: App, auth: ResolvedSession, organizationId: string, code: ErrorCode): MaybePromise<MemberRow> {
  const found = isUuid(organizationId) ? membershipOf(app, auth, organizationId) : null;
  const userId = auth.user.id;
  const take = (row: MembershipRow | null): MemberRow => {
    if (!row) throw new AuthError(code);
    return { ...row, organizationId, userId };
  };
  // Remembered by the session's cache entry, or SQLite: no promise on has-permission's path (docs/performance.md).
  return found instanceof Promise ? found.then(take) : take(found);
}

export async function findOrganization(em: EntityManager, id: string): Promise<IOrganization | null> {
  return isUuid(id) ? em.findOne(Organization, { id }, { disableIdentityMap: true }) : null;
}

/**
 * The organization row locked FOR UPDATE (PostgreSQL; SQLite runs one writer at a time) in the
 * caller's transaction: every change that counts (seats, owners, invitations, teams) takes it
 * first, so two of them cannot both count the same last seat or the same last owner.
 */
export async function lockOrganization(tx: EntityManager, id: string): Promise<IOrganization> {
  const org = isUuid(id) ? await tx.findOne(Organization, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE, disableIdentityMap: true }) : null;
  if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
  return org;
}

/** An organization's dynamic role, parsed (a row that no longer parses grants nothing). */
function parseGrants(raw: string): Grants | undefined {
  try {
    const parsed = organizationGrantsSchema.safeParse(JSON.parse(raw));
    return parsed.success ? (parsed.data as Grants) : undefined;
  } catch {
    return undefined;
  }
}

/** The names among `names` that may be dynamic roles (dynamic roles on, and not a configured role). */
function dynamicNames(app: App, names: readonly string[]): string[] {
  if (!app.config.organization.dynamicAccessControl.enabled) return [];
  const roles = app.config.organization.roles;
  return names.filter((n) => !Object.hasOwn(roles, n));
}

/** The dynamic roles among `unknown` (dynamicNames), one query. */
async function dynamicRoles(em: EntityManager | (() => EntityManager), organizationId: string, unknown: readonly string[]): Promise<Map<string, Grants>> {
  const found = new Map<string, Grants>();
  if (unknown.length === 0) return found;
  const manager = typeof em === "function" ? em() : em;
  for (const row of await manager.find(OrganizationRole, { organization: organizationId, role: { $in: unknown } }, { disableIdentityMap: true })) {
    const grants = parseGrants(row.permission);
    if (grants) found.set(row.role, grants);
  }
  return found;
}

/**
 * Whether one of the member's roles grants every action of `request` (the kernel's checker); `em`
 * (or its getter) reads dynamic roles, and only a role the configuration does not define makes it
 * read (otherwise the answer is at hand, no promise).
 */
export function memberMay(app: App, em: EntityManager | (() => EntityManager), member: MemberRow, request: PermissionRequest): MaybePromise<boolean> {
  const names = splitRoles(member.role);
  const unknown = dynamicNames(app, names);
  const roles = app.config.organization.roles;
  if (unknown.length === 0) return rolesGrant(roles, names, request);
  return dynamicRoles(em, member.organizationId, unknown).then((dynamic) => rolesGrant(roles, names, request, (n) => dynamic.get(n)));
}

/** memberMay, or 403 `code`. */
export async function assertMemberMay(app: App, em: EntityManager, member: MemberRow, request: PermissionRequest, code: ErrorCode): Promise<void> {
  if (!(await memberMay(app, em, member, request))) throw new AuthError(code);
}

export const isOwner = (app: App, role: string) => splitRoles(role).includes(app.config.organization.creatorRole);

/** Role names a member may be given: configured ones, and the organization's dynamic ones; else 400 ROLE_NOT_FOUND. */
export async function parseRoleInput(app: App, em: EntityManager, organizationId: string, role: string | string[]): Promise<string> {
  const names = (Array.isArray(role) ? role : [role]).flatMap(splitRoles);
  if (names.length === 0) throw new AuthError("ROLE_NOT_FOUND");
  const dynamic = await dynamicRoles(em, organizationId, dynamicNames(app, names));
  const unknown = names.filter((n) => !Object.hasOwn(app.config.organization.roles, n) && !dynamic.has(n));
  if (unknown.length > 0) throw new AuthError("ROLE_NOT_FOUND");
  return [...new Set(names)].join(",");
}

/** Members of the organization holding the creator role (locked organization first: lockOrganization). */
export async function ownerCount(app: App, tx: EntityManager, organizationId: string): Promise<number> {
  const owner = app.config.organization.creatorRole;
  const rows = await tx.find(Member, { organization: organizationId, role: { $like: `%${owner}%` } }, { fields: ["role"], disableIdentityMap: true });
  return rows.filter((r) => isOwner(app, r.role)).length;
}
