import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Member, Team, TeamMember, User } from "../../db/entities/index.ts";
import type { MaybePromise } from "../../db/session-store/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { actorOf, clearActiveOrganization, isUuid, normalizeEmail, recordAudit, uuidv7, type Actor, type PermissionRequest, type RequestInfo, type ResolvedSession } from "../../core/index.ts";
import { assertMemberMay, findMembership, isOwner, lockOrganization, memberMay, memberRow, ownerCount, parseRoleInput, requireMembership, requireMembershipNow, targetOrganizationId } from "./access.ts";
import { membersChanged } from "./member-totals.ts";
import { assertOrganizationRoom } from "./organizations.service.ts";
import type { HasPermissionInput } from "./organization.schema.ts";
import { publicMember, type MemberRow } from "./views.ts";

/**
 * Members and their roles (better-auth's remove-member, update-member-role, leave,
 * get-active-member, get-active-member-role, has-permission, and the server's add-member;
 * docs/organizations.md). Every change that counts owners or seats locks the organization row
 * first (access.ts lockOrganization), so the last owner and the last seat are the database's.
 */

const audit = (app: App, tx: EntityManager, actor: Actor, action: Parameters<typeof recordAudit>[3]["action"], organizationId: string, metadata: Record<string, unknown>) =>
  recordAudit(tx, app.clock, actor, { action, targetType: "organization", targetId: organizationId, metadata });

/**
 * Inserts the membership if the organization has a free seat (`membershipLimit`), in the caller's
 * transaction with the organization locked: two concurrent joins on the last seat, one wins.
 */
export async function insertMember(app: App, tx: EntityManager, organizationId: string, userId: string, role: string): Promise<MemberRow> {
  await lockOrganization(tx, organizationId);
  if ((await tx.count(Member, { organization: organizationId })) >= app.config.organization.membershipLimit) throw new AuthError("ORGANIZATION_MEMBERSHIP_LIMIT_REACHED");
  if (await findMembership(tx, organizationId, userId)) throw new AuthError("USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION");
  await assertOrganizationRoom(app, tx, userId);
  const now = app.clock.now();
  const row = { id: uuidv7(now.getTime()), organization: organizationId, user: userId, role, createdAt: now };
  await tx.insert(Member, row);
  membersChanged(app, tx, organizationId, [userId]);
  return { id: row.id, organizationId, userId, role, createdAt: now };
}

/** add-member (admins and the library; better-auth's server-only endpoint): adds an existing user with `role`. */
export async function addMember(app: App, em: EntityManager, actor: Actor, input: { userId: string; role: string | string[]; organizationId: string; teamId?: string | undefined }) {
  const user = isUuid(input.userId) ? await em.findOne(User, { id: input.userId }, { disableIdentityMap: true }) : null;
  if (!user) throw new AuthError("USER_NOT_FOUND");
  return inTransaction(em, async (tx) => {
    const role = await parseRoleInput(app, tx, input.organizationId, input.role);
    const member = await insertMember(app, tx, input.organizationId, user.id, role);
    if (input.teamId) await joinTeamOf(app, tx, input.organizationId, input.teamId, user.id);
    await audit(app, tx, actor, "organization-add-member", input.organizationId, { memberId: member.id, userId: user.id, role });
    return publicMember({ ...member, user: { id: user.id, name: user.name, email: user.email, image: user.image ?? null } });
  });
}

/** A team of the organization gains the user (teams on); 400 TEAM_NOT_FOUND otherwise. */
export async function joinTeamOf(app: App, tx: EntityManager, organizationId: string, teamId: string, userId: string): Promise<void> {
  const team = app.config.organization.teams.enabled && isUuid(teamId) ? await tx.findOne(Team, { id: teamId, organization: organizationId }, { disableIdentityMap: true }) : null;
  if (!team) throw new AuthError("TEAM_NOT_FOUND");
  const max = app.config.organization.teams.maximumMembersPerTeam;
  if (max !== undefined && (await tx.count(TeamMember, { team: teamId })) >= max) throw new AuthError("TEAM_MEMBER_LIMIT_REACHED");
  if ((await tx.count(TeamMember, { team: teamId, user: userId })) > 0) return;
  await tx.insert(TeamMember, { id: uuidv7(app.clock.now().getTime()), team: teamId, user: userId, createdAt: app.clock.now() });
}

/** The membership goes with the user's teams of that organization, and every session of theirs working in it works in none. */
async function dropMembership(app: App, tx: EntityManager, member: MemberRow): Promise<void> {
  await tx.nativeDelete(Member, { id: member.id });
  membersChanged(app, tx, member.organizationId, [member.userId]);
  const teams = await tx.find(Team, { organization: member.organizationId }, { fields: ["id"], disableIdentityMap: true });
  if (teams.length > 0) await tx.nativeDelete(TeamMember, { user: member.userId, team: { $in: teams.map((t) => t.id) } });
  await clearActiveOrganization(app, tx, member.organizationId, member.userId);
}

/** The member to act on, with its user: by id, or by the user's address, within `organizationId` only. */
async function findTarget(em: EntityManager, organizationId: string, memberIdOrEmail: string): Promise<MemberRow | null> {
  const byEmail = memberIdOrEmail.includes("@");
  if (!byEmail && !isUuid(memberIdOrEmail)) return null;
  const where = byEmail ? { organization: organizationId, user: { email: normalizeEmail(memberIdOrEmail) } } : { id: memberIdOrEmail, organization: organizationId };
  const m = await em.findOne(Member, where, { populate: ["user"], disableIdentityMap: true });
  if (!m) return null;
  const u = m.user.getEntity();
  return { ...memberRow(m), user: { id: u.id, name: u.name, email: u.email, image: u.image ?? null } };
}

/**
 * POST /organization/remove-member: `member: ["delete"]`; an owner only by an owner, and never
 * the last one. The removed user's sessions stop working in the organization.
 */
export async function removeMember(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { memberIdOrEmail: string; organizationId?: string | undefined }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    const caller = await requireMembership(tx, organizationId, auth.user.id, "MEMBER_NOT_FOUND");
    const target = await findTarget(tx, organizationId, input.memberIdOrEmail);
    if (!target) throw new AuthError("MEMBER_NOT_FOUND");
    await assertMemberMay(app, tx, caller, { member: ["delete"] }, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER");
    if (isOwner(app, target.role)) {
      if (!isOwner(app, caller.role)) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER");
      if ((await ownerCount(app, tx, organizationId)) <= 1) throw new AuthError("YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
    }
    await dropMembership(app, tx, target);
    await audit(app, tx, actorOf(auth, req), "organization-remove-member", organizationId, { memberId: target.id, userId: target.userId });
    return { member: publicMember(target) };
  });
}

/**
 * POST /organization/update-member-role: `member: ["update"]`; only owners touch owners or make
 * owners; the last owner cannot step down.
 */
export async function updateMemberRole(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { memberId: string; role: string | string[]; organizationId?: string | undefined }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    const role = await parseRoleInput(app, tx, organizationId, input.role);
    const caller = await requireMembership(tx, organizationId, auth.user.id, "MEMBER_NOT_FOUND");
    const target = isUuid(input.memberId) ? await tx.findOne(Member, { id: input.memberId }, { disableIdentityMap: true }) : null;
    if (!target) throw new AuthError("MEMBER_NOT_FOUND");
    if (target.organization.id !== organizationId) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    const callerIsOwner = isOwner(app, caller.role);
    if ((isOwner(app, target.role) || isOwner(app, role)) && !callerIsOwner) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    if (isOwner(app, target.role) && !isOwner(app, role) && (await ownerCount(app, tx, organizationId)) <= 1) throw new AuthError("YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER");
    await assertMemberMay(app, tx, caller, { member: ["update"] }, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    await tx.nativeUpdate(Member, { id: target.id }, { role });
    membersChanged(app, tx, organizationId, [target.user.id]); // the member's sessions, a role filter's total
    await audit(app, tx, actorOf(auth, req), "organization-update-member-role", organizationId, { memberId: target.id, userId: target.user.id, from: target.role, to: role });
    return publicMember({ ...memberRow(target), role });
  });
}

/** POST /organization/leave: any member but the last owner. */
export async function leaveOrganization(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, organizationId: string) {
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId).catch(() => {
      throw new AuthError("MEMBER_NOT_FOUND");
    });
    const member = await requireMembership(tx, organizationId, auth.user.id, "MEMBER_NOT_FOUND");
    if (isOwner(app, member.role) && (await ownerCount(app, tx, organizationId)) <= 1) throw new AuthError("YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
    await dropMembership(app, tx, member);
    await audit(app, tx, actorOf(auth, req), "organization-leave", organizationId, { memberId: member.id });
    const u = auth.user;
    return publicMember({ ...member, user: { id: u.id, name: u.name, email: u.email, image: u.image } });
  });
}

/** GET /organization/get-active-member: the caller's membership of the active organization, with the user. */
export async function getActiveMember(em: EntityManager, auth: ResolvedSession) {
  const organizationId = targetOrganizationId(auth, undefined);
  const member = await requireMembership(em, organizationId, auth.user.id, "MEMBER_NOT_FOUND");
  const u = auth.user;
  return publicMember({ ...member, user: { id: u.id, name: u.name, email: u.email, image: u.image } });
}

/** GET /organization/get-active-member-role: `{ role }` of the caller, or of `userId` when the caller is a member too. */
export async function getActiveMemberRole(em: EntityManager, auth: ResolvedSession, organizationId: string, userId: string | undefined) {
  const caller = await requireMembership(em, organizationId, auth.user.id, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  if (!userId) return { role: caller.role };
  const other = isUuid(userId) ? await findMembership(em, organizationId, userId) : null;
  if (!other) throw new AuthError("YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  return { role: other.role };
}

/**
 * POST /organization/has-permission, whole: whether the caller's role in the organization
 * (`organizationId`, else the active one) grants every action, by the kernel's checker. The
 * membership is one prepared lookup (access.ts requireMembershipNow, docs/performance.md); `emOf`
 * is asked for only when a dynamic role must be read, so on SQLite with configured roles the answer
 * comes without a promise. The procedure and the REST bridge's lean path (rest-bridge/lean.ts)
 * both answer with it. Not a member: 403 (better-auth: 401).
 */
export function checkPermission(app: App, emOf: () => EntityManager, auth: ResolvedSession, input: HasPermissionInput): MaybePromise<{ error: null; success: boolean }> {
  const request = (input.permissions ?? input.permission)!;
  const answer = (success: boolean) => ({ error: null, success });
  const decide = (member: MemberRow) => {
    const may = memberMay(app, emOf, member, request);
    return may instanceof Promise ? may.then(answer) : answer(may);
  };
  const member = requireMembershipNow(app, auth, targetOrganizationId(auth, input.organizationId), "NOT_A_MEMBER_OF_THE_ORGANIZATION");
  return member instanceof Promise ? member.then(decide) : decide(member);
}
