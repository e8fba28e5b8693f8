import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEvent, Member, Organization } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, expectError, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/** Organizations, members and roles over real HTTP (docs/organizations.md). */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ organization: { roles: { billing: { organization: ["update"] } } } });
});
afterAll(async () => {
  await server?.close();
});

const op = (path: string, body: unknown, u: SignedInUser) => post(`${server.auth}/organization/${path}`, body, { bearer: u.token });
const q = (path: string, query: Record<string, string>, u: SignedInUser) => get(`${server.auth}/organization/${path}?${new URLSearchParams(query)}`, { bearer: u.token });
let n = 0;
const slug = () => `org-${Date.now().toString(36)}-${n++}`;

async function orgWithOwner() {
  const owner = await signUp(server);
  const res = await op("create", { name: "Acme", slug: slug() }, owner);
  expect(res.status, res.text).toBe(200);
  return { owner, org: res.body as { id: string; slug: string; members: { id: string }[] } };
}

async function join(orgId: string, role: string, admin: SignedInUser) {
  const u = await signUp(server);
  const res = await post(`${server.auth}/organization/add-member`, { userId: u.id, organizationId: orgId, role }, { bearer: admin.token });
  expect(res.status, res.text).toBe(200);
  return { user: u, memberId: res.body.id as string };
}

let admin: SignedInUser;
beforeAll(async () => {
  admin = await bootstrapAdmin(server);
});

describe("organizations", () => {
  it("create: the creator is owner, the organization becomes active (get-session shows it); list, get-full, check-slug; set-active null clears it", async () => {
    const { owner, org } = await orgWithOwner();
    expect(org).toMatchObject({ name: "Acme", logo: null, metadata: null, members: [{ userId: owner.id, role: "owner", organizationId: org.id }] });
    const session = await get(`${server.auth}/get-session`, { bearer: owner.token });
    expect(session.body.session.activeOrganizationId).toBe(org.id);
    expect(session.body.session.activeTeamId).toBeNull();
    const list = await get(`${server.auth}/organization/list`, { bearer: owner.token });
    expect(list.body.map((o: { id: string }) => o.id)).toEqual([org.id]);
    const full = await q("get-full-organization", {}, owner);
    expect(full.status, full.text).toBe(200);
    expect(full.body).toMatchObject({ id: org.id, members: [{ userId: owner.id, user: { id: owner.id, email: owner.email } }], invitations: [] });
    expectError(await op("check-slug", { slug: org.slug }, owner), 400, "ORGANIZATION_SLUG_ALREADY_TAKEN");
    expect((await op("check-slug", { slug: slug() }, owner)).body).toEqual({ status: true });
    const cleared = await op("set-active", { organizationId: null }, owner);
    expect(cleared.status).toBe(200);
    expect(cleared.body).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: owner.token })).body.session.activeOrganizationId).toBeNull();
    expect((await op("set-active", { organizationSlug: org.slug }, owner)).body.id).toBe(org.id);
    expect((await get(`${server.auth}/get-session`, { bearer: owner.token })).body.session.activeOrganizationId).toBe(org.id);
  });

  it("a taken slug: 400 ORGANIZATION_ALREADY_EXISTS on create, ORGANIZATION_SLUG_ALREADY_TAKEN on update", async () => {
    const a = await orgWithOwner();
    const b = await orgWithOwner();
    expectError(await op("create", { name: "Dup", slug: a.org.slug }, b.owner), 400, "ORGANIZATION_ALREADY_EXISTS");
    expectError(await op("update", { organizationId: b.org.id, data: { slug: a.org.slug } }, b.owner), 400, "ORGANIZATION_SLUG_ALREADY_TAKEN");
    const ok = await op("update", { organizationId: b.org.id, data: { name: "Renamed", metadata: { plan: "pro" } } }, b.owner);
    expect(ok.body).toMatchObject({ name: "Renamed", metadata: { plan: "pro" } });
  });

  it("three racing creates of one slug end in one organization", async () => {
    const users = await Promise.all([signUp(server), signUp(server), signUp(server)]);
    const s = slug();
    const replies = await Promise.all(users.map((u) => op("create", { name: "Race", slug: s }, u)));
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400, 400]);
    for (const r of replies.filter((r) => r.status === 400)) expect(r.body.code).toBe("ORGANIZATION_ALREADY_EXISTS");
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(Organization, { slug: s })).toBe(1);
    const org = await em.findOneOrFail(Organization, { slug: s });
    expect(await em.count(Member, { organization: org.id })).toBe(1);
  });

  it("non-members cannot read, update or delete; members cannot update or delete; a bad id is 4xx, never 5xx", async () => {
    const { owner, org } = await orgWithOwner();
    const stranger = await signUp(server);
    expectError(await q("get-full-organization", { organizationId: org.id }, stranger), 403, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    expectError(await op("set-active", { organizationId: org.id }, stranger), 403, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    expectError(await op("update", { organizationId: org.id, data: { name: "x" } }, stranger), 400, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    const { user: member } = await join(org.id, "member", admin);
    expectError(await op("update", { organizationId: org.id, data: { name: "x" } }, member), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION");
    expectError(await op("delete", { organizationId: org.id }, member), 403, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION");
    const { user: billing } = await join(org.id, "billing", admin);
    expect((await op("update", { organizationId: org.id, data: { name: "By billing" } }, billing)).status).toBe(200);
    for (const bad of ["not-a-uuid", "'; drop table members; --"]) {
      expect((await q("get-full-organization", { organizationId: bad }, owner)).status).toBe(400);
      expect((await op("set-active", { organizationId: bad }, owner)).status).toBe(400);
      expect((await op("remove-member", { organizationId: bad, memberIdOrEmail: bad }, owner)).status).toBe(400);
      expect((await op("update-member-role", { organizationId: org.id, memberId: bad, role: "member" }, owner)).status).toBe(400);
      expect((await q("list-members", { organizationId: bad }, owner)).status).toBe(403);
    }
  });

  it("delete: owners only; members and the active organization of every session go in one transaction", async () => {
    const { owner, org } = await orgWithOwner();
    const { user: member } = await join(org.id, "member", admin);
    await op("set-active", { organizationId: org.id }, member);
    const res = await op("delete", { organizationId: org.id }, owner);
    expect(res.status, res.text).toBe(200);
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(Member, { organization: org.id })).toBe(0);
    for (const u of [owner, member]) expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.session.activeOrganizationId).toBeNull();
    const audit = await em.find(AuditEvent, { targetId: org.id }, { orderBy: { createdAt: "asc" } });
    expect(audit.map((a) => a.action)).toEqual(["organization-create", "organization-add-member", "organization-delete"]);
    expect(audit.every((a) => a.targetType === "organization")).toBe(true);
  });
});

describe("members and roles", () => {
  it("list-members: paginated, sorted and filtered by allowlisted fields; unknown fields 400", async () => {
    const { owner, org } = await orgWithOwner();
    for (let i = 0; i < 3; i++) await join(org.id, i === 0 ? "admin" : "member", admin);
    const page = await q("list-members", { organizationId: org.id, limit: "2", offset: "1" }, owner);
    expect(page.status, page.text).toBe(200);
    expect(page.body.total).toBe(4);
    expect(page.body.members).toHaveLength(2);
    expect(page.body.members[0].user).toHaveProperty("email");
    const admins = await q("list-members", { organizationId: org.id, filterField: "role", filterValue: "admin" }, owner);
    expect(admins.body.total).toBe(1);
    const byRole = await q("list-members", { organizationId: org.id, sortBy: "role", sortDirection: "desc" }, owner);
    expect(byRole.body.members.map((m: { role: string }) => m.role)).toEqual(["owner", "member", "member", "admin"]);
    expectError(await q("list-members", { organizationId: org.id, sortBy: "user.passwordHash" }, owner), 400, "INVALID_SORT_FIELD");
    expectError(await q("list-members", { organizationId: org.id, filterField: "email", filterValue: "x" }, owner), 400, "INVALID_FILTER_FIELD");
    expectError(await q("list-members", { organizationId: org.id, filterField: "role", filterOperator: "like", filterValue: "%" }, owner), 400, "VALIDATION_ERROR");
    expectError(await q("list-members", { organizationId: org.id }, await signUp(server)), 403, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  });

  it("has-permission: owner, admin and member grants (better-auth's defaults) through the one checker", async () => {
    const { owner, org } = await orgWithOwner();
    const { user: orgAdmin } = await join(org.id, "admin", admin);
    const { user: member } = await join(org.id, "member", admin);
    const ask = async (u: SignedInUser, permissions: Record<string, string[]>) => (await op("has-permission", { organizationId: org.id, permissions }, u)).body.success;
    expect(await ask(owner, { organization: ["delete"] })).toBe(true);
    expect(await ask(orgAdmin, { organization: ["delete"] })).toBe(false);
    expect(await ask(orgAdmin, { member: ["create", "update"], invitation: ["create"] })).toBe(true);
    expect(await ask(member, { member: ["create"] })).toBe(false);
    expect(await ask(member, { ac: ["read"] })).toBe(true);
    expect(await ask(owner, { constructor: ["x"] } as never)).toBe(false);
    expectError(await op("has-permission", { organizationId: org.id, permissions: { member: ["create"] } }, await signUp(server)), 403, "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    const role = await q("get-active-member-role", { organizationId: org.id, userId: member.id }, owner);
    expect(role.body).toEqual({ role: "member" });
  });

  it("attack: the last owner cannot leave, be demoted or be removed", async () => {
    const { owner, org } = await orgWithOwner();
    const ownerMember = org.members[0]!.id;
    expectError(await op("leave", { organizationId: org.id }, owner), 400, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
    expectError(await op("update-member-role", { organizationId: org.id, memberId: ownerMember, role: "admin" }, owner), 400, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER");
    expectError(await op("remove-member", { organizationId: org.id, memberIdOrEmail: ownerMember }, owner), 400, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
    // With a second owner, one may go.
    const second = await join(org.id, "owner", admin);
    expect((await op("leave", { organizationId: org.id }, second.user)).status).toBe(200);
    expectError(await op("leave", { organizationId: org.id }, owner), 400, "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER");
  });

  it("attack: two owners demoting each other at once leave one owner", async () => {
    const { owner, org } = await orgWithOwner();
    const second = await join(org.id, "owner", admin);
    const [a, b] = await Promise.all([
      op("update-member-role", { organizationId: org.id, memberId: second.memberId, role: "member" }, owner),
      op("update-member-role", { organizationId: org.id, memberId: org.members[0]!.id, role: "member" }, second.user),
    ]);
    // The loser is either refused as the last owner (400) or, demoted first, no longer an owner (403).
    expect([a.status, b.status].filter((s) => s === 200)).toHaveLength(1);
    expect([a.status, b.status].every((s) => [200, 400, 403].includes(s))).toBe(true);
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(Member, { organization: org.id, role: "owner" })).toBe(1);
  });

  it("attack: admins cannot touch owners or make owners; members cannot change roles", async () => {
    const { owner, org } = await orgWithOwner();
    const orgAdmin = await join(org.id, "admin", admin);
    const member = await join(org.id, "member", admin);
    const ownerMember = org.members[0]!.id;
    expectError(await op("update-member-role", { organizationId: org.id, memberId: ownerMember, role: "member" }, orgAdmin.user), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    expectError(await op("update-member-role", { organizationId: org.id, memberId: member.memberId, role: "owner" }, orgAdmin.user), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    expectError(await op("update-member-role", { organizationId: org.id, memberId: orgAdmin.memberId, role: "owner" }, orgAdmin.user), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    expectError(await op("remove-member", { organizationId: org.id, memberIdOrEmail: owner.email }, orgAdmin.user), 403, "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER");
    expectError(await op("update-member-role", { organizationId: org.id, memberId: member.memberId, role: "admin" }, member.user), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER");
    expectError(await op("update-member-role", { organizationId: org.id, memberId: member.memberId, role: "emperor" }, owner), 400, "ROLE_NOT_FOUND");
    const ok = await op("update-member-role", { organizationId: org.id, memberId: member.memberId, role: ["member", "billing"] }, orgAdmin.user);
    expect(ok.body.role).toBe("member,billing");
    // A member of another organization is not reachable through this one.
    const other = await orgWithOwner();
    expectError(await op("remove-member", { organizationId: org.id, memberIdOrEmail: other.org.members[0]!.id }, owner), 400, "MEMBER_NOT_FOUND");
    // The admin removes the plain member; the removed user's sessions stop working in it.
    await op("set-active", { organizationId: org.id }, member.user);
    expect((await op("remove-member", { organizationId: org.id, memberIdOrEmail: member.user.email }, orgAdmin.user)).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: member.user.token })).body.session.activeOrganizationId).toBeNull();
  });

  it("add-member is for admins only; the membership limit holds", async () => {
    const { owner, org } = await orgWithOwner();
    const u = await signUp(server);
    expectError(await post(`${server.auth}/organization/add-member`, { userId: u.id, organizationId: org.id, role: "owner" }, { bearer: owner.token }), 403, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS");
    const listed = await get(`${server.auth}/admin/list-user-organizations?userId=${owner.id}`, { bearer: admin.token });
    expect(listed.body).toEqual([expect.objectContaining({ id: org.id, role: "owner" })]);
    expectError(await get(`${server.auth}/admin/list-user-organizations?userId=${owner.id}`, { bearer: owner.token }), 403, "YOU_ARE_NOT_ALLOWED_TO_GET_USER");
  });

  it("deleting a user removes their memberships; the organization keeps its admins", async () => {
    const { owner, org } = await orgWithOwner();
    const orgAdmin = await join(org.id, "admin", admin);
    const res = await adminPost(server, "remove-user", { userId: owner.id }, admin.token);
    expect(res.status, res.text).toBe(200);
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(Member, { organization: org.id })).toBe(1);
    expect((await q("list-members", { organizationId: org.id }, orgAdmin.user)).body.members[0].role).toBe("admin");
  });
});
