import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { cookieFrom, get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * Session cookies as better-auth 1.6 sends them (docs/wire-contract.md §3, docs/http-api.md "Session
 * cookie"): update-user and the change-email link re-send the caller's session cookie, GET
 * /verify-email answers `user` (null, or the moved user), and every session cookie's Max-Age is
 * the configured lifetime, never a lifetime minus the time elapsed rounded down. The clock is
 * injected (test/harness/clock.ts): each case moves it by a millisecond where rounding would show.
 */

const SESSION = "portcullis.session_token";
const ADMIN_SESSION = "portcullis.admin_session";
const WEEK_SEC = 7 * 24 * 3600;

let sink: SmtpSink;
let server: TestServer;
beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, user: { changeEmail: { enabled: true } } });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const line = (res: Reply, name: string) => res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
const pair = (res: Reply, name = SESSION) => cookieFrom(res.headers, name);

describe(`update-user re-sends the session cookie (${testDialect})`, () => {
  it("to the cookie it was called with: same token, Max-Age the configured lifetime", async () => {
    const user = await signUp(server);
    server.clock.advance(1);
    const res = await post(`${server.auth}/update-user`, { name: "Renamed" }, { cookie: user.cookie });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: true });
    expect(line(res, SESSION)).toBe(`${user.cookie}; Max-Age=${WEEK_SEC}; Path=/; HttpOnly; SameSite=Lax`);
  });

  it("a rememberMe: false session gets its browser-session cookie back (no Max-Age)", async () => {
    const user = await signUp(server);
    const short = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD, rememberMe: false });
    const res = await post(`${server.auth}/update-user`, { image: null }, { cookie: pair(short)! });
    expect(line(res, SESSION)).toBe(`${pair(short)}; Path=/; HttpOnly; SameSite=Lax`);
  });

  it("the cookie rides along a Bearer of the same session; Bearer alone and failures get no cookie", async () => {
    const user = await signUp(server);
    const both = await post(`${server.auth}/update-user`, { name: "Both" }, { cookie: user.cookie, bearer: user.token });
    expect(pair(both)).toBe(user.cookie);
    const bearerOnly = await post(`${server.auth}/update-user`, { name: "Bearer" }, { bearer: user.token });
    expect(bearerOnly.status).toBe(200);
    expect(bearerOnly.headers.getSetCookie()).toEqual([]);
    const failed = await post(`${server.auth}/update-user`, {}, { cookie: user.cookie });
    expect(failed.status).toBe(400);
    expect(failed.headers.getSetCookie()).toEqual([]);
  });

  it("over tRPC too", async () => {
    const user = await signUp(server);
    const res = await post(`${server.url}/api/trpc/updateUser`, { name: "Via tRPC" }, { cookie: user.cookie });
    expect(res.status, res.text).toBe(200);
    expect(pair(res)).toBe(user.cookie);
  });
});

/** Verifies the user's address through the mailed link; the link's reply. */
async function verifyAddress(user: SignedInUser): Promise<Reply> {
  const before = sink.to(user.email).length;
  expect((await post(`${server.auth}/send-verification-email`, { email: user.email })).status).toBe(200);
  await sink.waitFor(() => sink.to(user.email).length > before);
  return get(onServer(linkFrom(sink.to(user.email)[before]!, "/verify-email"), server.url));
}

/** The next mailed /verify-email link to `email` (after `before` mails). */
async function nextLink(email: string, before: number): Promise<string> {
  await sink.waitFor(() => sink.to(email).length > before);
  return onServer(linkFrom(sink.to(email)[before]!, "/verify-email"), server.url);
}

describe(`GET /verify-email answers as better-auth (${testDialect})`, () => {
  it("an address verified: { status: true, user: null }, no cookie", async () => {
    const user = await signUp(server);
    const res = await verifyAddress(user);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: true, user: null });
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it("change-email: the approval answers { status: true }; the proof answers the moved user and re-sends the caller's cookie", async () => {
    const user = await signUp(server);
    await verifyAddress(user);
    const newEmail = uniqueEmail("moved");
    const oldMails = sink.to(user.email).length;
    expect((await post(`${server.auth}/change-email`, { newEmail }, { cookie: user.cookie })).status).toBe(200);
    const approval = await get(await nextLink(user.email, oldMails), { cookie: user.cookie });
    expect(approval.body).toEqual({ status: true });
    expect(approval.headers.getSetCookie()).toEqual([]);

    server.clock.advance(MINUTE);
    const proof = await get(await nextLink(newEmail, 0), { cookie: user.cookie });
    expect(proof.status, proof.text).toBe(200);
    expect(proof.body).toEqual({ status: true, user: { ...user.user, email: newEmail, emailVerified: true, updatedAt: server.clock.now().toISOString() } });
    expect(line(proof, SESSION)).toBe(`${user.cookie}; Max-Age=${WEEK_SEC}; Path=/; HttpOnly; SameSite=Lax`);
  });

  it("change-email proof: with callbackURL the cookie comes with the 302; without a session, or with another user's, no cookie", async () => {
    /** A verified user's change: the approval link (old address) followed, the proof link (new address) returned. */
    const proofLink = async (user: SignedInUser, callbackURL?: string) => {
      await verifyAddress(user);
      const newEmail = uniqueEmail("moved");
      const oldMails = sink.to(user.email).length;
      expect((await post(`${server.auth}/change-email`, { newEmail, ...(callbackURL ? { callbackURL } : {}) }, { bearer: user.token })).status).toBe(200);
      expect((await get(await nextLink(user.email, oldMails))).status).toBe(callbackURL ? 302 : 200);
      return { link: await nextLink(newEmail, 0), newEmail };
    };
    const alice = await signUp(server);
    const redirected = await get((await proofLink(alice, "/changed")).link, { cookie: alice.cookie });
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get("location")).toBe("http://127.0.0.1:3000/changed");
    expect(pair(redirected)).toBe(alice.cookie);

    const bob = await signUp(server);
    const anonymous = await get((await proofLink(bob)).link);
    expect(anonymous.status, anonymous.text).toBe(200);
    expect(anonymous.body.user.id).toBe(bob.id);
    expect(anonymous.headers.getSetCookie()).toEqual([]);

    const carol = await signUp(server);
    const foreign = await get((await proofLink(carol)).link, { cookie: bob.cookie });
    expect(foreign.status, foreign.text).toBe(200);
    expect(foreign.body.user.id).toBe(carol.id);
    expect(foreign.headers.getSetCookie()).toEqual([]);
  });
});

describe(`Max-Age is the configured lifetime, not a rounded remainder (${testDialect})`, () => {
  it("stop-impersonating hands the admin's session back with Max-Age = the session lifetime", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    server.clock.advance(1); // 1 ms after the admin's sign-in: a remainder would round down to 604799
    const start = await post(`${server.auth}/admin/impersonate-user`, { userId: target.id }, { cookie: admin.cookie });
    expect(start.status, start.text).toBe(200);
    // The admin's token waits for as long as the admin's session lives: never a second less.
    expect(line(start, ADMIN_SESSION)).toBe(`${ADMIN_SESSION}=${admin.token}; Max-Age=${WEEK_SEC}; Path=/; HttpOnly; SameSite=Lax`);
    server.clock.advance(5 * MINUTE + 1);
    const browser = `${pair(start)}; ${pair(start, ADMIN_SESSION)}`;
    const stop = await post(`${server.auth}/admin/stop-impersonating`, undefined, { cookie: browser });
    expect(stop.status, stop.text).toBe(200);
    expect(line(stop, SESSION)).toBe(`${admin.cookie}; Max-Age=${WEEK_SEC}; Path=/; HttpOnly; SameSite=Lax`);
  });

  it("the admin_session cookie of an older admin session is its remaining lifetime, rounded up", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    // 12 h and 1.5 s later (within a day: the session does not slide): 561598.5 s remain.
    server.clock.advance(12 * 3600 * 1000 + 1500);
    const start = await post(`${server.auth}/admin/impersonate-user`, { userId: target.id }, { bearer: admin.token });
    expect(line(start, ADMIN_SESSION)).toMatch(new RegExp(`; Max-Age=${WEEK_SEC - 12 * 3600 - 1};`));
    // A rememberMe: false admin session is restored as a browser-session cookie.
    const short = await post(`${server.auth}/sign-in/email`, { email: admin.email, password: PASSWORD, rememberMe: false });
    const imp = await post(`${server.auth}/admin/impersonate-user`, { userId: target.id }, { cookie: pair(short)! });
    const stop = await post(`${server.auth}/admin/stop-impersonating`, undefined, { cookie: `${pair(imp)}; ${pair(imp, ADMIN_SESSION)}` });
    expect(line(stop, SESSION)).toBe(`${pair(short)}; Path=/; HttpOnly; SameSite=Lax`);
  });
});
