import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, request, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { callbackUri, oidcProviders } from "../../harness/oauth-helpers.ts";

/**
 * docs/wire-contract.md §6: an impersonation session may read and act as the
 * user but never creates lasting access; stopping it never mints an admin session.
 */

const SESSION = "portcullis.session_token";
const ADMIN_SESSION = "portcullis.admin_session";

let oidc: TestOidcProvider;
let server: TestServer;
let trpc: string;
let admin: SignedInUser;

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: [callbackUri("oidc")] });
  server = await startTestServer({ providers: { oidc: oidcProviders(oidc).oidc } });
  trpc = `${server.url}/api/trpc`;
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

/** A fresh user and a bearer impersonation token for them. */
async function impersonated(): Promise<{ target: SignedInUser; imp: string; sessionId: string }> {
  const target = await signUp(server);
  const start = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
  expect(start.status, start.text).toBe(200);
  return { target, imp: start.headers.get("set-auth-token")!, sessionId: start.body.session.id };
}

function expectTrpcError(res: Reply, status: number, authCode: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.data.authCode, res.text).toBe(authCode);
}

async function deviceCode() {
  const res = await request("POST", `${server.auth}/device/code`, {
    raw: new URLSearchParams({ client_id: "tv" }).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  expect(res.status, res.text).toBe(200);
  return res.body as { device_code: string; user_code: string };
}

const deviceStatus = async (userCode: string) => (await get(`${server.auth}/device?user_code=${userCode}`)).body.status;

async function sessionRows(userId: string): Promise<string[]> {
  const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select id from sessions where user_id = ?", [userId]);
  return rows.map((r: { id: string }) => r.id).sort();
}

describe("impersonation sessions never create lasting access", () => {
  it("device approval: 403 IMPERSONATION_NOT_ALLOWED over REST and tRPC; the user can still approve, and deny stays open", async () => {
    const { target, imp } = await impersonated();
    const code = await deviceCode();
    // Looking the code up (and so claiming it) acts as the user: allowed.
    expect((await get(`${server.auth}/device?user_code=${code.user_code}`, { bearer: imp })).status).toBe(200);
    expectError(await post(`${server.auth}/device/approve`, { userCode: code.user_code }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectTrpcError(await post(`${trpc}/device.approve`, { userCode: code.user_code }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    // Refused before the input is read: no validation detail leaks either.
    expectError(await post(`${server.auth}/device/approve`, {}, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expect(await deviceStatus(code.user_code)).toBe("pending");
    expect((await post(`${server.auth}/device/approve`, { userCode: code.user_code }, { bearer: target.token })).status).toBe(200);

    // Deny takes access away rather than creating any: an impersonating admin may do it.
    const other = await deviceCode();
    await get(`${server.auth}/device?user_code=${other.user_code}`, { bearer: imp });
    expect((await post(`${server.auth}/device/deny`, { userCode: other.user_code }, { bearer: imp })).status).toBe(200);
  });

  it("link-social and unlink-account: 403 over REST and tRPC, nothing started or removed", async () => {
    const { target, imp } = await impersonated();
    expectError(await post(`${server.auth}/link-social`, { provider: "oidc" }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectTrpcError(await post(`${trpc}/linkSocial`, { provider: "oidc" }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    const states = await server.portcullis.app.orm.em.fork().getConnection().execute("select id from verifications where value like ?", [`%${target.id}%`]);
    expect(states).toHaveLength(0);

    expectError(await post(`${server.auth}/unlink-account`, { providerId: "credential" }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectTrpcError(await post(`${trpc}/unlinkAccount`, { providerId: "credential" }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    const accounts = await get(`${server.auth}/list-accounts`, { bearer: imp });
    expect(accounts.status).toBe(200);
    expect(accounts.body.map((a: { providerId: string }) => a.providerId)).toEqual(["credential"]);
    // The user's own session may start a link.
    expect((await post(`${server.auth}/link-social`, { provider: "oidc", disableRedirect: true }, { bearer: target.token })).status).toBe(200);
  });

  it("change-password: 403 over REST and tRPC; the password is unchanged", async () => {
    const { target, imp } = await impersonated();
    const body = { currentPassword: PASSWORD, newPassword: "impersonator-chose-this", revokeOtherSessions: true };
    expectError(await post(`${server.auth}/change-password`, body, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectTrpcError(await post(`${trpc}/changePassword`, body, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    await signIn(server, target.email, PASSWORD);
    expect((await get(`${server.auth}/get-session`, { bearer: target.token })).body.user.id).toBe(target.id);
  });

  it("reading and acting as the user still work", async () => {
    const { target, imp } = await impersonated();
    expect((await get(`${server.auth}/get-session`, { bearer: imp })).body.user.id).toBe(target.id);
    expect((await post(`${server.auth}/update-user`, { name: "Renamed by support" }, { bearer: imp })).body).toEqual({ status: true });
    expect((await post(`${trpc}/updateUser`, { name: "Renamed again" }, { bearer: imp })).status).toBe(200);
    expect((await get(`${server.auth}/list-sessions`, { bearer: imp })).status).toBe(200);
    expect((await get(`${trpc}/listAccounts`, { bearer: imp })).status).toBe(200);
  });
});

describe("stop-impersonating never mints an admin session", () => {
  it("Bearer only, no admin_session cookie: the impersonation ends, no admin session is created or handed out", async () => {
    const { target, imp, sessionId } = await impersonated();
    const adminSessionsBefore = await sessionRows(admin.id);

    const stop = await adminPost(server, "stop-impersonating", undefined, imp);
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body).toBeNull();
    expect(stop.headers.get("set-auth-token")).toBeNull();
    const cookies = stop.headers.getSetCookie();
    expect(cookies.find((c) => c.startsWith(`${SESSION}=`))).toMatch(new RegExp(`^${SESSION}=; Max-Age=0`));
    expect(cookies.find((c) => c.startsWith(`${ADMIN_SESSION}=`))).toMatch(new RegExp(`^${ADMIN_SESSION}=; Max-Age=0`));

    expect(await sessionRows(admin.id)).toEqual(adminSessionsBefore);
    expect(await sessionRows(target.id)).not.toContain(sessionId);
    expect((await get(`${server.auth}/get-session`, { bearer: imp })).body).toBeNull();
    // The admin's own token, kept by the client, is untouched; the target's too.
    expect((await get(`${server.auth}/get-session`, { bearer: admin.token })).body.user.id).toBe(admin.id);
    expect((await get(`${server.auth}/get-session`, { bearer: target.token })).body.user.id).toBe(target.id);
  });

  it("tRPC form: null, and no admin session", async () => {
    const { imp } = await impersonated();
    const before = await sessionRows(admin.id);
    const stop = await post(`${trpc}/admin.stopImpersonating`, {}, { bearer: imp });
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body.result.data).toBeNull();
    expect(stop.headers.get("set-auth-token")).toBeNull();
    expect(await sessionRows(admin.id)).toEqual(before);
  });

  it("an admin_session cookie whose session is no longer live restores nothing", async () => {
    const stale = await signIn(server, admin.email);
    const { imp } = await impersonated();
    expect((await post(`${server.auth}/revoke-session`, { token: stale.token }, { bearer: admin.token })).status).toBe(200);
    const before = await sessionRows(admin.id);
    const stop = await post(`${server.auth}/admin/stop-impersonating`, undefined, { cookie: `${SESSION}=${imp}; ${ADMIN_SESSION}=${stale.token}` });
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body).toBeNull();
    expect(stop.headers.getSetCookie().find((c) => c.startsWith(`${SESSION}=`))).toMatch(new RegExp(`^${SESSION}=; Max-Age=0`));
    expect(await sessionRows(admin.id)).toEqual(before);
    expect((await get(`${server.auth}/get-session`, { bearer: imp })).body).toBeNull();
  });
});
