import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, HOUR } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * docs/wire-contract.md §9: POST /delete-user and GET /delete-user/callback. The
 * password or a fresh session deletes at once; otherwise a single-use link is mailed, which
 * works in a browser signed in as the same user. One transaction removes everything the user
 * holds, with an audit event.
 */

let sink: SmtpSink;
let server: TestServer;
let off: TestServer;
let admin: SignedInUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, user: { deleteUser: { enabled: true } } });
  off = await startTestServer();
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await off?.close();
  await sink?.close();
});

const deleteUser = (token: string, body: unknown = {}): Promise<Reply> => post(`${server.auth}/delete-user`, body, { bearer: token });

async function rowsOf(userId: string): Promise<Record<string, number>> {
  const conn = server.portcullis.app.orm.em.fork().getConnection();
  const count = async (sql: string, params: unknown[]) => Number((await conn.execute(sql, params))[0].n);
  const owned = `%"userId":${JSON.stringify(userId)}%`;
  return {
    users: await count("select count(*) as n from users where id = ?", [userId]),
    sessions: await count("select count(*) as n from sessions where user_id = ?", [userId]),
    accounts: await count("select count(*) as n from accounts where user_id = ?", [userId]),
    deviceCodes: await count("select count(*) as n from device_codes where user_id = ?", [userId]),
    verifications: await count("select count(*) as n from verifications where value like ?", [owned]),
  };
}

const GONE = { users: 0, sessions: 0, accounts: 0, deviceCodes: 0, verifications: 0 };

/** A user holding a second session, an approved device code and a pending reset link. */
async function userWithHoldings(): Promise<SignedInUser> {
  const user = await signUp(server);
  await signIn(server, user.email);
  const code = await request("POST", `${server.auth}/device/code`, { raw: "client_id=tv", headers: { "content-type": "application/x-www-form-urlencoded" } });
  expect((await get(`${server.auth}/device?user_code=${code.body.user_code}`, { bearer: user.token })).status).toBe(200);
  expect((await post(`${server.auth}/device/approve`, { userCode: code.body.user_code }, { bearer: user.token })).status).toBe(200);
  await post(`${server.auth}/request-password-reset`, { email: user.email });
  await sink.waitFor((m) => m.to.includes(user.email) && m.subject === "Reset your password");
  expect(await rowsOf(user.id)).toMatchObject({ users: 1, sessions: 2, accounts: 1, deviceCodes: 1, verifications: 1 });
  return user;
}

async function auditOf(userId: string) {
  const res = await adminGet(server, "list-audit-events", { limit: 100 }, admin.token);
  return (res.body.events as Array<Record<string, unknown>>).filter((e) => e.action === "delete-user" && e.targetId === userId);
}

describe(`delete-user (${testDialect})`, () => {
  it("is off by default: 404 NOT_FOUND on both endpoints", async () => {
    const user = await signUp(off);
    expectError(await post(`${off.auth}/delete-user`, {}, { bearer: user.token }), 404, "NOT_FOUND");
    expectError(await get(`${off.auth}/delete-user/callback?token=${"a".repeat(43)}`, { bearer: user.token }), 404, "NOT_FOUND");
  });

  it("a fresh session deletes at once: every row the user held goes, the cookie is cleared, an audit event stays", async () => {
    const user = await userWithHoldings();
    const res = await deleteUser(user.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true, message: "User deleted" });
    expect(res.headers.getSetCookie().some((c) => c.startsWith("portcullis.session_token=;"))).toBe(true);
    expect(await rowsOf(user.id)).toEqual(GONE);
    expect(await auditOf(user.id)).toMatchObject([{ actorId: user.id, impersonatorId: null }]);
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body).toBeNull();
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD })).status).toBe(401);
  });

  it("an old session needs the password: right deletes, wrong is 400 INVALID_PASSWORD", async () => {
    const user = await signUp(server);
    server.clock.advance(DAY + HOUR);
    expectError(await deleteUser(user.token, { password: "not the password" }), 400, "INVALID_PASSWORD");
    expect((await rowsOf(user.id)).users).toBe(1);
    expect((await deleteUser(user.token, { password: PASSWORD })).body).toEqual({ success: true, message: "User deleted" });
    expect((await rowsOf(user.id)).users).toBe(0);
  });

  it("an old session without the password gets a mailed link, which deletes once in the user's browser", async () => {
    const user = await userWithHoldings();
    server.clock.advance(DAY + HOUR);
    const res = await deleteUser(user.token, { callbackURL: "/goodbye" });
    expect(res.body).toEqual({ success: true, message: "Verification email sent" });
    expect((await rowsOf(user.id)).users).toBe(1);
    const mail = await sink.waitFor((m) => m.to.includes(user.email) && m.subject === "Confirm the deletion of your account");
    const link = onServer(linkFrom(mail, "/delete-user/callback"), server.url);
    expect(new URL(link).searchParams.get("callbackURL")).toBe("/goodbye");

    // Without a session, or in another user's browser, the link deletes nothing and stays good.
    expectError(await get(link), 401, "UNAUTHORIZED");
    const other = await signUp(server);
    expectError(await get(link, { bearer: other.token }), 400, "INVALID_TOKEN");
    expect((await rowsOf(user.id)).users).toBe(1);
    expect((await rowsOf(other.id)).users).toBe(1);

    const done = await get(link, { cookie: user.cookie });
    expect(done.status).toBe(302);
    expect(done.headers.get("location")).toBe("http://127.0.0.1:3000/goodbye");
    expect(await rowsOf(user.id)).toEqual(GONE);
    expect(await auditOf(user.id)).toHaveLength(1);
  });

  it("the mailed token also works as POST /delete-user {token}, once", async () => {
    const user = await signUp(server);
    const second = await signIn(server, user.email);
    server.clock.advance(DAY + HOUR);
    await deleteUser(user.token);
    const mail = await sink.waitFor((m) => m.to.includes(user.email) && m.subject === "Confirm the deletion of your account");
    const token = new URL(linkFrom(mail, "/delete-user/callback")).searchParams.get("token")!;
    expectError(await deleteUser(user.token, { token: "x".repeat(43) }), 400, "INVALID_TOKEN");
    expect((await deleteUser(second.token, { token })).body).toEqual({ success: true, message: "User deleted" });
    expect(await rowsOf(user.id)).toEqual(GONE);
  });

  it("a user with no password and an old session gets the link; giving a password is 400 CREDENTIAL_ACCOUNT_NOT_FOUND", async () => {
    const created = await adminPost(server, "create-user", { email: uniqueEmail("nopw"), name: "No Password" }, admin.token);
    expect(created.status, created.text).toBe(200);
    const imp = await adminPost(server, "impersonate-user", { userId: created.body.user.id }, admin.token);
    const token = imp.headers.get("set-auth-token")!;
    // An impersonation session may never delete the account (docs/wire-contract.md §6), by any proof.
    expectError(await deleteUser(token), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await deleteUser(token, { password: PASSWORD }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await get(`${server.auth}/delete-user/callback?token=${"a".repeat(43)}`, { bearer: token }), 403, "IMPERSONATION_NOT_ALLOWED");
    const viaTrpc = await post(`${server.url}/api/trpc/deleteUser`, {}, { bearer: token });
    expect(viaTrpc.status).toBe(403);
    expect((await rowsOf(created.body.user.id)).users).toBe(1);
  });

  it("tRPC deleteUser deletes with a fresh session; no session is 401", async () => {
    const user = await signUp(server);
    expectError(await post(`${server.auth}/delete-user`, {}), 401, "UNAUTHORIZED");
    const res = await post(`${server.url}/api/trpc/deleteUser`, {}, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result.data).toEqual({ success: true, message: "User deleted" });
    expect(await rowsOf(user.id)).toEqual(GONE);
  });

  it("racing deletions of one account: one deletes (one audit event), the others find no session; never a 500", async () => {
    const user = await signUp(server);
    const others = await Promise.all([1, 2, 3].map(() => signIn(server, user.email)));
    const replies = await Promise.all([user, ...others].map((u) => deleteUser(u.token)));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 200).length, JSON.stringify(replies.map((r) => r.text))).toBe(1);
    expect(statuses.every((s) => s === 200 || s === 401)).toBe(true);
    expect(await rowsOf(user.id)).toEqual(GONE);
    expect(await auditOf(user.id)).toHaveLength(1);
  });

  it("an admin who deletes themself ends the impersonations they started", async () => {
    const other = await bootstrapAdmin(server);
    const target = await signUp(server);
    const imp = (await adminPost(server, "impersonate-user", { userId: target.id }, other.token)).headers.get("set-auth-token")!;
    expect((await get(`${server.auth}/get-session`, { bearer: imp })).body).not.toBeNull();
    expect((await deleteUser(other.token)).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: imp })).body).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: target.token })).body).not.toBeNull();
  });
});
