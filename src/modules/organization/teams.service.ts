import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Team, TeamMember } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { actorOf, clearActiveTeam, isUuid, recordAudit, setActiveContext, uuidv7, type RequestInfo, type ResolvedSession } from "../../core/index.ts";
import { assertMemberMay, lockOrganization, requireMembership, targetOrganizationId } from "./access.ts";
import { joinTeamOf } from "./members.service.ts";
import { publicTeam } from "./views.ts";

/**
 * Teams (better-auth's create-team, list-teams, update-team, remove-team, add-team-member,
 * remove-team-member, list-team-members, set-active-team, list-user-teams; docs/organizations.md
 * "Teams"), when `organization.teams.enabled`. Counts (`maximumTeams`, `maximumMembersPerTeam`)
 * are taken with the organization locked.
 */

const audit = (app: App, tx: EntityManager, auth: ResolvedSession, req: RequestInfo, action: Parameters<typeof recordAudit>[3]["action"], organizationId: string, metadata: Record<string, unknown>) =>
  recordAudit(tx, app.clock, actorOf(auth, req), { action, targetType: "organization", targetId: organizationId, metadata });

/** The organization's team, or 400 TEAM_NOT_FOUND. */
async function teamOf(em: EntityManager, organizationId: string, teamId: string) {
  const team = isUuid(teamId) ? await em.findOne(Team, { id: teamId, organization: organizationId }, { disableIdentityMap: true }) : null;
  if (!team) throw new AuthError("TEAM_NOT_FOUND");
  return team;
}

export async function createTeam(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { name: string; organizationId?: string | undefined }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    const member = await requireMembership(tx, organizationId, auth.user.id, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    await assertMemberMay(app, tx, member, { team: ["create"] }, "YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION");
    if ((await tx.count(Team, { organization: organizationId })) >= app.config.organization.teams.maximumTeams) throw new AuthError("YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS");
    const now = app.clock.now();
    const row = { id: uuidv7(now.getTime()), organization: organizationId, name: input.name, createdAt: now, updatedAt: now };
    await tx.insert(Team, row);
    await audit(app, tx, auth, req, "organization-create-team", organizationId, { teamId: row.id, name: row.name });
    return publicTeam({ ...row, organization: { id: organizationId } } as never);
  });
}

export async function listTeams(em: EntityManager, auth: ResolvedSession, organizationId: string | undefined) {
  const orgId = targetOrganizationId(auth, organizationId);
  await requireMembership(em, orgId, auth.user.id, "YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION");
  return (await em.find(Team, { organization: orgId }, { orderBy: { createdAt: "asc", id: "asc" }, disableIdentityMap: true })).map(publicTeam);
}

export async function updateTeam(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { teamId: string; data: { name?: string | undefined } }) {
  const organizationId = targetOrganizationId(auth, undefined);
  const member = await requireMembership(em, organizationId, auth.user.id, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM");
  await assertMemberMay(app, em, member, { team: ["update"] }, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM");
  return inTransaction(em, async (tx) => {
    const team = await teamOf(tx, organizationId, input.teamId);
    const now = app.clock.now();
    const name = input.data.name ?? team.name;
    await tx.nativeUpdate(Team, { id: team.id }, { name, updatedAt: now });
    await audit(app, tx, auth, req, "organization-update-team", organizationId, { teamId: team.id, name });
    return publicTeam({ ...team, name, updatedAt: now });
  });
}

export async function removeTeam(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { teamId: string; organizationId?: string | undefined }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    // better-auth's rule: not the team the caller's session works in.
    if (auth.session.activeTeamId === input.teamId) throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM");
    const member = await requireMembership(tx, organizationId, auth.user.id, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM");
    await assertMemberMay(app, tx, member, { team: ["delete"] }, "YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION");
    const team = await teamOf(tx, organizationId, input.teamId);
    if (!app.config.organization.teams.allowRemovingAllTeams && (await tx.count(Team, { organization: organizationId })) <= 1) throw new AuthError("UNABLE_TO_REMOVE_LAST_TEAM");
    await tx.nativeDelete(TeamMember, { team: team.id });
    await tx.nativeDelete(Team, { id: team.id });
    await clearActiveTeam(app, tx, team.id);
    await audit(app, tx, auth, req, "organization-remove-team", organizationId, { teamId: team.id });
    return { message: "Team removed successfully." };
  });
}

/** add-team-member: `member: ["update"]`; the user must be a member of the organization. */
export async function addTeamMember(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { teamId: string; userId: string }) {
  const organizationId = targetOrganizationId(auth, undefined);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    const member = await requireMembership(tx, organizationId, auth.user.id, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    await assertMemberMay(app, tx, member, { member: ["update"] }, "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER");
    if (!isUuid(input.userId)) throw new AuthError("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    await requireMembership(tx, organizationId, input.userId, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    await joinTeamOf(app, tx, organizationId, input.teamId, input.userId);
    const row = await tx.findOneOrFail(TeamMember, { team: input.teamId, user: input.userId }, { disableIdentityMap: true });
    await audit(app, tx, auth, req, "organization-add-team-member", organizationId, { teamId: input.teamId, userId: input.userId });
    return { id: row.id, teamId: input.teamId, userId: input.userId, createdAt: row.createdAt.toISOString() };
  });
}

/** remove-team-member: `member: ["delete"]`; the user's sessions stop working in the team. */
export async function removeTeamMember(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { teamId: string; userId: string }) {
  const organizationId = targetOrganizationId(auth, undefined);
  return inTransaction(em, async (tx) => {
    const member = await requireMembership(tx, organizationId, auth.user.id, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    await assertMemberMay(app, tx, member, { member: ["delete"] }, "YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER");
    if (!isUuid(input.userId)) throw new AuthError("USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    await requireMembership(tx, organizationId, input.userId, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    const team = await teamOf(tx, organizationId, input.teamId);
    await tx.nativeDelete(TeamMember, { team: team.id, user: input.userId });
    await clearActiveTeam(app, tx, team.id, input.userId);
    await audit(app, tx, auth, req, "organization-remove-team-member", organizationId, { teamId: team.id, userId: input.userId });
    return { message: "Team member removed successfully." };
  });
}

/** list-team-members: of `teamId` or the active team; the caller must be in the team. */
export async function listTeamMembers(em: EntityManager, auth: ResolvedSession, teamId: string | undefined) {
  const id = teamId ?? auth.session.activeTeamId;
  if (!id) throw new AuthError("YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM");
  const team = isUuid(id) ? await em.findOne(Team, { id }, { disableIdentityMap: true }) : null;
  if (!team) throw new AuthError("TEAM_NOT_FOUND");
  if ((await em.count(TeamMember, { team: id, user: auth.user.id })) === 0) throw new AuthError("USER_IS_NOT_A_MEMBER_OF_THE_TEAM");
  const rows = await em.find(TeamMember, { team: id }, { orderBy: { createdAt: "asc", id: "asc" }, limit: 1000, disableIdentityMap: true });
  return rows.map((r) => ({ id: r.id, teamId: id, userId: r.user.id, createdAt: r.createdAt.toISOString() }));
}

/** set-active-team: a team of the active organization the caller is in; null clears it. */
export async function setActiveTeam(app: App, em: EntityManager, auth: ResolvedSession, teamId: string | null | undefined) {
  const self = { id: auth.session.id, userId: auth.user.id };
  if (teamId === null || (teamId === undefined && !auth.session.activeTeamId)) {
    if (auth.session.activeTeamId) await setActiveContext(app, em, self, auth.session.activeOrganizationId, null);
    return null;
  }
  const organizationId = targetOrganizationId(auth, undefined);
  const team = await teamOf(em, organizationId, teamId ?? auth.session.activeTeamId!);
  if ((await em.count(TeamMember, { team: team.id, user: auth.user.id })) === 0) throw new AuthError("USER_IS_NOT_A_MEMBER_OF_THE_TEAM");
  await setActiveContext(app, em, self, organizationId, team.id);
  return publicTeam(team);
}

/** list-user-teams: the caller's teams, in organizations they still belong to. */
export async function listUserTeams(em: EntityManager, userId: string) {
  const rows = await em.find(TeamMember, { user: userId }, { populate: ["team"], orderBy: { createdAt: "asc" }, disableIdentityMap: true });
  return rows.map((r) => publicTeam(r.team.getEntity()));
}

