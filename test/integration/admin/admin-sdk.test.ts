/**
 * better-auth's official client with its admin plugin, unchanged, against our bridge
 * (docs/wire-contract.md §6: "endpoints, requests and responses as better-auth's admin plugin"). Node has
 * no cookie jar: the session travels as `set-auth-token` → `Authorization: Bearer`.
 */
import { createAuthClient } from "better-auth/client";
import { adminClient } from "better-auth/client/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

let server: TestServer;
let root: SignedInUser;

beforeAll(async () => {
  server = await startTestServer();
  root = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

function makeClient(token: string) {
  const state = { token };
  const client = createAuthClient({
    baseURL: server.url,
    basePath: "/api/auth",
    plugins: [adminClient()],
    fetchOptions: {
      auth: { type: "Bearer", token: () => state.token },
      onSuccess(ctx) {
        const next = ctx.response.headers.get("set-auth-token");
        if (next) state.token = next;
      },
    },
  });
  return { client, state };
}

describe("better-auth/client admin plugin", () => {
  it("drives users, roles, bans, sessions and permissions", async () => {
    const { client } = makeClient(root.token);
    const email = uniqueEmail("sdk-admin");
    const created = await client.admin.createUser({ email, password: PASSWORD, name: "SDK Made", role: "user" });
    expect(created.error).toBeNull();
    const userId = created.data!.user.id;
    expect(created.data!.user).toMatchObject({ email, role: "user" });

    const found = await client.admin.listUsers({ query: { searchValue: "sdk-admin", searchField: "email", searchOperator: "contains", limit: 10 } });
    expect(found.error).toBeNull();
    expect(found.data).toMatchObject({ total: 1, limit: 10, offset: 0 });
    expect(found.data!.users[0]!.id).toBe(userId);
    const admins = await client.admin.listUsers({ query: { filterField: "role", filterValue: "admin", filterOperator: "eq" } });
    expect(admins.data!.users.map((u) => u.id)).toEqual([root.id]);

    const one = await client.admin.getUser({ query: { id: userId } });
    expect(one.data).toMatchObject({ id: userId, email });
    const updated = await client.admin.updateUser({ userId, data: { name: "SDK Renamed" } });
    expect(updated.data).toMatchObject({ id: userId, name: "SDK Renamed" });
    const role = await client.admin.setRole({ userId, role: "admin" });
    expect(role.data!.user.role).toBe("admin");
    await client.admin.setRole({ userId, role: "user" });

    const banned = await client.admin.banUser({ userId, banReason: "sdk", banExpiresIn: 600 });
    expect(banned.data!.user).toMatchObject({ banned: true, banReason: "sdk" });
    const unbanned = await client.admin.unbanUser({ userId });
    expect(unbanned.data!.user.banned).toBe(false);

    expect((await client.admin.setUserPassword({ userId, newPassword: "sdk new password" })).data).toEqual({ status: true });
    const sessions = await client.admin.listUserSessions({ userId });
    expect(sessions.data).toEqual({ sessions: [] });
    expect((await client.admin.revokeUserSessions({ userId })).data).toEqual({ success: true });

    const can = await client.admin.hasPermission({ permissions: { user: ["ban"], session: ["revoke"] } });
    expect(can.data).toEqual({ success: true, error: null });

    expect((await client.admin.removeUser({ userId })).data).toEqual({ success: true });
    const gone = await client.admin.getUser({ query: { id: userId } });
    expect(gone.error).toMatchObject({ status: 404, code: "USER_NOT_FOUND" });
  });

  it("impersonates and stops, the token following set-auth-token", async () => {
    const target = await signUp(server);
    const { client, state } = makeClient(root.token);
    const imp = await client.admin.impersonateUser({ userId: target.id });
    expect(imp.error).toBeNull();
    expect((imp.data!.session as { impersonatedBy?: string }).impersonatedBy).toBe(root.id);
    expect(state.token).not.toBe(root.token);
    const asTarget = await client.getSession();
    expect(asTarget.data!.user.id).toBe(target.id);
    // A bearer client carries no admin_session cookie: the impersonation ends and no admin
    // session is minted (docs/wire-contract.md §6), so the client goes back to the token it kept.
    const stop = await client.admin.stopImpersonating();
    expect(stop.error).toBeNull();
    expect(stop.data).toBeNull();
    expect((await client.getSession()).data).toBeNull();
    state.token = root.token;
    const back = await client.getSession();
    expect(back.data!.user.id).toBe(root.id);
  });

  it("gives a plain user better-auth's 403 codes", async () => {
    const plain = await signUp(server);
    const { client } = makeClient(plain.token);
    const res = await client.admin.listUsers({ query: {} });
    expect(res.error).toMatchObject({ status: 403, code: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS" });
    const can = await client.admin.hasPermission({ permissions: { user: ["list"] } });
    expect(can.data).toEqual({ success: false, error: null });
  });
});
