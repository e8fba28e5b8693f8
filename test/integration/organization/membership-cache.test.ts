import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Member } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, expectError, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * A session's cache entry remembers its memberships (core/session/memberships.ts), so has-permission
 * and list-members read no row on a hit. Every test here runs with a 60 s session cache and a
 * frozen clock: only the evictions that every members-table write makes (member-totals.ts
 * membersChanged) can make a change visible at once. The first test shows the cache is really
 * used (a write behind the service's back is not seen until the TTL has passed), so the others
 * cannot pass by reading the database each time.
 */
let server: TestServer;
let admin: SignedInUser;
beforeAll(async () => {
  server = await startTestServer({ session: { cacheTtlMs: 60_000 } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

let n = 0;
async function orgWithOwner() {
  const owner = await signUp(server);
  const res = await post(`${server.auth}/organization/create`, { name: "Cache Co", slug: `cache-${Date.now().toString(36)}-${n++}` }, { bearer: owner.token });
  expect(res.status, res.text).toBe(200);
  return { owner, orgId: res.body.id as string };
}
async function addMember(orgId: string, u: SignedInUser, role: string) {
  const res = await post(`${server.auth}/organization/add-member`, { userId: u.id, organizationId: orgId, role }, { bearer: admin.token });
  expect(res.status, res.text).toBe(200);
  return res.body.id as string;
}
/** has-permission for `member: ["create"]` (owner and admin have it, member not): true, false, or the refusal's code. */
async function mayInvite(u: SignedInUser | { headers: Record<string, string> }, orgId: string): Promise<boolean | string> {
  const caller = "token" in u ? { bearer: u.token } : u;
  const res = await post(`${server.auth}/organization/has-permission`, { organizationId: orgId, permissions: { member: ["create"] } }, caller);
  if (res.status === 200) return res.body.success as boolean;
  return `${res.status} ${res.body.code}`;
}
const listMembers = (u: SignedInUser, orgId: string) => get(`${server.auth}/organization/list-members?organizationId=${orgId}`, { bearer: u.token });

describe("memberships remembered by the session cache", () => {
  it("are used: a role changed behind the service's back shows only once the TTL has passed", async () => {
    const { orgId } = await orgWithOwner();
    const m = await signUp(server);
    await addMember(orgId, m, "admin");
    expect(await mayInvite(m, orgId)).toBe(true); // remembered now
    await server.portcullis.app.orm.em.fork().nativeUpdate(Member, { organization: orgId, user: m.id }, { role: "member" });
    expect(await mayInvite(m, orgId)).toBe(true);
    server.clock.advance(60_000);
    expect(await mayInvite(m, orgId)).toBe(false);
  });

  it("update-member-role is seen at once, by the member's session and by their API key", async () => {
    const { owner, orgId } = await orgWithOwner();
    const m = await signUp(server);
    const memberId = await addMember(orgId, m, "admin");
    const key = await post(`${server.auth}/api-key/create`, {}, { bearer: m.token });
    expect(key.status, key.text).toBe(200);
    const byKey = { headers: { "x-api-key": key.body.key as string } };
    expect(await mayInvite(m, orgId)).toBe(true);
    expect(await mayInvite(byKey, orgId)).toBe(true);
    const demoted = await post(`${server.auth}/organization/update-member-role`, { memberId, role: "member", organizationId: orgId }, { bearer: owner.token });
    expect(demoted.status, demoted.text).toBe(200);
    expect(await mayInvite(m, orgId)).toBe(false);
    expect(await mayInvite(byKey, orgId)).toBe(false);
    const promoted = await post(`${server.auth}/organization/update-member-role`, { memberId, role: "admin", organizationId: orgId }, { bearer: owner.token });
    expect(promoted.status, promoted.text).toBe(200);
    expect(await mayInvite(m, orgId)).toBe(true);
  });

  it("a remembered 'not a member' ends at once with add-member and with an accepted invitation", async () => {
    const { owner, orgId } = await orgWithOwner();
    const outsider = await signUp(server);
    expect(await mayInvite(outsider, orgId)).toBe("403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION"); // remembered now
    expectError(await listMembers(outsider, orgId), 403, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
    await addMember(orgId, outsider, "admin");
    expect(await mayInvite(outsider, orgId)).toBe(true);
    expect((await listMembers(outsider, orgId)).status).toBe(200);

    const guest = await signUp(server);
    expect((await adminPost(server, "update-user", { userId: guest.id, data: { emailVerified: true } }, admin.token)).status).toBe(200);
    expect(await mayInvite(guest, orgId)).toBe("403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    const inv = await post(`${server.auth}/organization/invite-member`, { email: guest.email, role: "admin", organizationId: orgId }, { bearer: owner.token });
    expect(inv.status, inv.text).toBe(200);
    const accepted = await post(`${server.auth}/organization/accept-invitation`, { invitationId: inv.body.id }, { bearer: guest.token });
    expect(accepted.status, accepted.text).toBe(200);
    expect(await mayInvite(guest, orgId)).toBe(true);
  });

  it("remove-member, leave and deleting the organization are seen at once, also by sessions working in another organization", async () => {
    const { owner, orgId } = await orgWithOwner();
    const [removed, leaving, staying] = [await signUp(server), await signUp(server), await signUp(server)];
    const removedId = await addMember(orgId, removed, "admin");
    await addMember(orgId, leaving, "admin");
    await addMember(orgId, staying, "admin");
    // `staying` works in an organization of their own: deleting this one clears no active organization of theirs.
    const own = await post(`${server.auth}/organization/create`, { name: "Own", slug: `own-${Date.now().toString(36)}-${n++}` }, { bearer: staying.token });
    expect(own.status, own.text).toBe(200);
    for (const u of [removed, leaving, staying]) expect(await mayInvite(u, orgId)).toBe(true);

    expect((await post(`${server.auth}/organization/remove-member`, { memberIdOrEmail: removedId, organizationId: orgId }, { bearer: owner.token })).status).toBe(200);
    expect(await mayInvite(removed, orgId)).toBe("403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    expect((await post(`${server.auth}/organization/leave`, { organizationId: orgId }, { bearer: leaving.token })).status).toBe(200);
    expect(await mayInvite(leaving, orgId)).toBe("403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");

    expect(await mayInvite(staying, orgId)).toBe(true);
    expect((await post(`${server.auth}/organization/delete`, { organizationId: orgId }, { bearer: owner.token })).status).toBe(200);
    expect(await mayInvite(staying, orgId)).toBe("403 USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION");
    expectError(await listMembers(staying, orgId), 403, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  });

  it("deleting a user (admin remove-user) leaves nothing remembered for their API key's principal either", async () => {
    const { orgId } = await orgWithOwner();
    const m = await signUp(server);
    await addMember(orgId, m, "admin");
    expect(await mayInvite(m, orgId)).toBe(true);
    expect((await adminPost(server, "remove-user", { userId: m.id }, admin.token)).status).toBe(200);
    expect(await mayInvite(m, orgId)).toBe("401 UNAUTHORIZED");
  });
});
