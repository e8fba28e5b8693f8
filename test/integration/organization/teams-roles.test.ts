import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TeamMember } from "../../../src/db/entities/index.ts";
import { bootstrapAdmin, expectError, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/** Teams and dynamic roles over real HTTP (docs/organizations.md "Teams", "Dynamic roles"). */
let server: TestServer;
let off: TestServer;
let admin: SignedInUser;
beforeAll(async () => {
  server = await startTestServer({ organization: { teams: { enabled: true, maximumTeams: 3, maximumMembersPerTeam: 2 }, dynamicAccessControl: { enabled: true } } });
  off = await startTestServer();
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await off?.close();
});

const op = (path: string, body: unknown, u: SignedInUser) => post(`${server.auth}/organization/${path}`, body, { bearer: u.token });
const q = (path: string, query: Record<string, string>, u: SignedInUser) => get(`${server.auth}/organization/${path}?${new URLSearchParams(query)}`, { bearer: u.token });
let n = 0;

async function orgWithOwner() {
  const owner = await signUp(server);
  const res = await op("create", { name: `Team Co ${n}`, slug: `team-${Date.now().toString(36)}-${n++}` }, owner);
  expect(res.status, res.text).toBe(200);
  return { owner, org: res.body as { id: string } };
}

async function join(orgId: string, role: string) {
  const u = await signUp(server);
  const res = await post(`${server.auth}/organization/add-member`, { userId: u.id, organizationId: orgId, role }, { bearer: admin.token });
  expect(res.status, res.text).toBe(200);
  expect((await op("set-active", { organizationId: orgId }, u)).status).toBe(200);
  return { user: u, memberId: res.body.id as string };
}

describe("teams", () => {
  it("off by default: the team and role routes answer 404", async () => {
    const u = await signUp(off);
    expect((await post(`${off.auth}/organization/create-team`, { name: "x" }, { bearer: u.token })).status).toBe(404);
    expect((await post(`${off.auth}/organization/create-role`, { role: "x", permission: {} }, { bearer: u.token })).status).toBe(404);
  });

  it("a new organization gets a default team with its creator, active in the session; create, rename, members, active team, limits", async () => {
    const { owner, org } = await orgWithOwner();
    const teams = await q("list-teams", {}, owner);
    expect(teams.body).toHaveLength(1);
    const defaultTeam = teams.body[0].id as string;
    expect((await get(`${server.auth}/get-session`, { bearer: owner.token })).body.session.activeTeamId).toBe(defaultTeam);
    const created = await op("create-team", { name: "Engineering" }, owner);
    expect(created.status, created.text).toBe(200);
    expect((await op("update-team", { teamId: created.body.id, data: { name: "Eng" } }, owner)).body.name).toBe("Eng");
    expect((await op("create-team", { name: "Third" }, owner)).status).toBe(200);
    expectError(await op("create-team", { name: "Fourth" }, owner), 400, "YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS");

    const a = await join(org.id, "member");
    const b = await join(org.id, "member");
    expect((await op("add-team-member", { teamId: created.body.id, userId: a.user.id }, owner)).status).toBe(200);
    expect((await op("add-team-member", { teamId: created.body.id, userId: owner.id }, owner)).status).toBe(200);
    expectError(await op("add-team-member", { teamId: created.body.id, userId: b.user.id }, owner), 403, "TEAM_MEMBER_LIMIT_REACHED");
    expectError(await op("add-team-member", { teamId: created.body.id, userId: (await signUp(server)).id }, owner), 400, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    expectError(await op("add-team-member", { teamId: created.body.id, userId: b.user.id }, a.user), 403, "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER");
    expect((await q("list-team-members", { teamId: created.body.id }, owner)).body.map((m: { userId: string }) => m.userId).sort()).toEqual([a.user.id, owner.id].sort());

    expect((await op("set-active-team", { teamId: created.body.id }, a.user)).body.id).toBe(created.body.id);
    expectError(await op("set-active-team", { teamId: defaultTeam }, a.user), 400, "USER_IS_NOT_A_MEMBER_OF_THE_TEAM");
    expect((await op("remove-team-member", { teamId: created.body.id, userId: a.user.id }, owner)).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: a.user.token })).body.session.activeTeamId).toBeNull();
    expect((await op("remove-team", { teamId: created.body.id }, owner)).status).toBe(200);
    expect(await server.portcullis.app.orm.em.fork().count(TeamMember, { team: created.body.id })).toBe(0);
    expectError(await op("remove-team", { teamId: defaultTeam }, a.user), 403, "YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION");
    expectError(await op("update-team", { teamId: "not-a-uuid", data: { name: "x" } }, owner), 400, "TEAM_NOT_FOUND");
  });

  it("leaving the organization leaves its teams", async () => {
    const { org } = await orgWithOwner();
    const a = await join(org.id, "member");
    expect((await op("leave", { organizationId: org.id }, a.user)).status).toBe(200);
    expect(await server.portcullis.app.orm.em.fork().count(TeamMember, { user: a.user.id })).toBe(0);
  });
});

describe("dynamic roles", () => {
  it("owners create, list, read, update and delete roles; members holding them get their grants through the same checker", async () => {
    const { owner, org } = await orgWithOwner();
    const created = await op("create-role", { role: "support", permission: { member: ["update"], invitation: ["create"] } }, owner);
    expect(created.status, created.text).toBe(200);
    expect(created.body).toMatchObject({ success: true, roleData: { role: "support", permission: { member: ["update"], invitation: ["create"] } } });
    expectError(await op("create-role", { role: "support", permission: {} }, owner), 400, "ROLE_NAME_IS_ALREADY_TAKEN");
    expectError(await op("create-role", { role: "admin", permission: {} }, owner), 400, "ROLE_NAME_IS_ALREADY_TAKEN");
    expectError(await op("create-role", { role: "x", permission: { billing: ["pay"] } }, owner), 400, "INVALID_RESOURCE");
    expect((await q("list-roles", {}, owner)).body.map((r: { role: string }) => r.role)).toEqual(["support"]);
    expect((await q("get-role", { roleName: "support" }, owner)).body.permission).toEqual({ member: ["update"], invitation: ["create"] });

    const s = await join(org.id, "support");
    const ask = async (permissions: Record<string, string[]>) => (await op("has-permission", { organizationId: org.id, permissions }, s.user)).body.success;
    expect(await ask({ invitation: ["create"] })).toBe(true);
    expect(await ask({ member: ["delete"] })).toBe(false);
    expect((await op("invite-member", { email: `dyn-${n}@example.test`, role: "member" }, s.user)).status).toBe(200);
    expectError(await op("invite-member", { email: `dyn2-${n}@example.test`, role: "member", organizationId: org.id }, (await join(org.id, "member")).user), 403, "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION");

    expectError(await op("delete-role", { roleName: "support" }, owner), 400, "ROLE_IS_ASSIGNED_TO_MEMBERS");
    expectError(await op("update-role", { roleName: "support", data: { roleName: "helpdesk" } }, owner), 400, "ROLE_IS_ASSIGNED_TO_MEMBERS");
    expect((await op("update-role", { roleName: "support", data: { permission: { invitation: ["create", "cancel"] } } }, owner)).body.roleData.permission).toEqual({ invitation: ["create", "cancel"] });
    expect(await ask({ invitation: ["cancel"] })).toBe(true);
    expect(await ask({ member: ["update"] })).toBe(false);
    expect((await op("remove-member", { organizationId: org.id, memberIdOrEmail: s.memberId }, owner)).status).toBe(200);
    expect((await op("delete-role", { roleName: "support" }, owner)).body).toEqual({ success: true });
    expectError(await op("delete-role", { roleName: "owner" }, owner), 400, "CANNOT_DELETE_A_PRE_DEFINED_ROLE");
    expectError(await q("get-role", { roleName: "support" }, owner), 400, "ROLE_NOT_FOUND");
  });

  it("attack: nobody grants what they do not hold; members cannot manage roles; roles stay in their organization", async () => {
    const { owner, org } = await orgWithOwner();
    const orgAdmin = await join(org.id, "admin");
    const member = await join(org.id, "member");
    expectError(await op("create-role", { role: "boss", permission: { organization: ["delete"] } }, orgAdmin.user), 403, "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_ROLE");
    expect((await op("create-role", { role: "helper", permission: { member: ["create"] } }, orgAdmin.user)).status).toBe(200);
    expectError(await op("update-role", { roleName: "helper", data: { permission: { organization: ["delete"] } } }, orgAdmin.user), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_A_ROLE");
    expectError(await op("create-role", { role: "mine", permission: {} }, member.user), 403, "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_ROLE");
    expect((await q("list-roles", {}, member.user)).status).toBe(200);
    expectError(await op("create-role", { role: "bad,name", permission: {} }, owner), 400, "VALIDATION_ERROR");
    // Another organization's dynamic role is unknown here.
    const other = await orgWithOwner();
    expect((await op("create-role", { role: "elsewhere", permission: { member: ["delete"] } }, other.owner)).status).toBe(200);
    expectError(await op("update-member-role", { organizationId: org.id, memberId: member.memberId, role: "elsewhere" }, owner), 400, "ROLE_NOT_FOUND");
  });
});
