/**
 * docs/wire-contract.md §2-§4: get-session, sliding expiry on the injected clock, list and revoke.
 * One server (and one FakeClock) for the file: the clock only moves forward and every test
 * makes its own users and sessions after any earlier move, so tests do not depend on each other.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY, HOUR, MINUTE, SECOND } from "../../harness/clock.ts";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const PASSWORD = "password123";
const COOKIE = "portcullis.session_token";
const SESSION_KEYS = ["activeOrganizationId", "activeTeamId", "createdAt", "expiresAt", "id", "impersonatedBy", "ipAddress", "token", "updatedAt", "userAgent", "userId"];
const USER_KEYS = [
  "banExpires",
  "banReason",
  "banned",
  "createdAt",
  "displayUsername",
  "email",
  "emailVerified",
  "id",
  "image",
  "name",
  "role",
  "twoFactorEnabled",
  "updatedAt",
  "username",
];
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const url = (path: string) => `${server.auth}${path}`;
const cookieOf = (token: string) => `${COOKIE}=${token}`;
const iso = (ms: number) => new Date(ms).toISOString();

interface Signed {
  email: string;
  token: string;
  userId: string;
}

async function signUp(extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<Signed> {
  const email = uniqueEmail("sess");
  const r = await post(url("/sign-up/email"), { name: "Session Tester", email, password: PASSWORD, ...extra }, { headers });
  expect(r.status, r.text).toBe(200);
  return { email, token: r.body.token, userId: r.body.user.id };
}

async function signIn(email: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<string> {
  const r = await post(url("/sign-in/email"), { email, password: PASSWORD, ...extra }, { headers });
  expect(r.status, r.text).toBe(200);
  return r.body.token as string;
}

const sessionBy = (token: string) => get(url("/get-session"), { bearer: token });

async function expectAlive(token: string, userId: string) {
  const r = await sessionBy(token);
  expect(r.status).toBe(200);
  expect(r.body?.user?.id, `session ${token.slice(0, 6)}… should be alive`).toBe(userId);
  return r;
}

async function expectDead(token: string) {
  const r = await sessionBy(token);
  expect(r.status).toBe(200);
  expect(r.text, `session ${token.slice(0, 6)}… should be dead`).toBe("null");
}

function expectUnauthorized(r: Reply) {
  expect(r.status, r.text).toBe(401);
  expect(r.body).toEqual({ code: "UNAUTHORIZED", message: expect.any(String) });
  expect(r.body.message.length).toBeGreaterThan(0);
}

describe("GET /get-session", () => {
  it("answers { session, user } with the cookie and with a bearer token, echoing only the presented token", async () => {
    const createdMs = server.clock.now().getTime();
    const { token, userId, email } = await signUp({}, { "user-agent": "SessionsTest/1.0 (get-session)" });

    for (const opts of [{ cookie: cookieOf(token) }, { bearer: token }]) {
      const r = await get(url("/get-session"), opts);
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^application\/json/);
      expect(Object.keys(r.body).sort()).toEqual(["session", "user"]);
      const { session, user } = r.body;
      expect(Object.keys(session).sort()).toEqual(SESSION_KEYS);
      expect(Object.keys(user).sort()).toEqual(USER_KEYS);
      expect(session.id).toMatch(UUID);
      expect(session.userId).toBe(userId);
      expect(session.createdAt).toBe(iso(createdMs));
      expect(session.updatedAt).toBe(iso(createdMs));
      expect(session.expiresAt).toBe(iso(createdMs + 7 * DAY));
      expect(session.ipAddress).toBe("127.0.0.1");
      expect(session.userAgent).toBe("SessionsTest/1.0 (get-session)");
      expect(session.impersonatedBy).toBeNull();
      expect(user).toMatchObject({ id: userId, email, name: "Session Tester", emailVerified: false, role: "user", banned: false });
      expect(user.createdAt).toMatch(ISO);
      // docs/wire-contract.md §2: `session.token` echoes the token the caller presented, nothing else.
      expect(session.token).toBe(token);
      expect(r.text.split(token)).toHaveLength(2);
      // Fresh session: nothing to extend, no cookie to re-send.
      expect(r.headers.getSetCookie()).toEqual([]);
    }
  });

  it("answers 200 with body null without a session or with a bad token", async () => {
    const unknown = "A".repeat(43); // well-formed, never issued
    const cases = [
      {},
      { bearer: "garbage" },
      { bearer: unknown },
      { cookie: `${COOKIE}=garbage` },
      { cookie: `${COOKIE}=${unknown}` },
      { headers: { authorization: "Basic dXNlcjpwYXNz" } },
    ];
    for (const opts of cases) {
      const r = await get(url("/get-session"), opts);
      expect(r.status, JSON.stringify(opts)).toBe(200);
      expect(r.text, JSON.stringify(opts)).toBe("null");
      expect(r.body).toBeNull();
    }
  });

  it("records the client ip and the User-Agent header of each sign-in on its own session", async () => {
    const { email, token, userId } = await signUp({}, { "user-agent": "Agent-One/1.0" });
    const second = await signIn(email, {}, { "user-agent": "Agent-Two/2.0 (X11; Linux)" });
    expect((await expectAlive(token, userId)).body.session).toMatchObject({ ipAddress: "127.0.0.1", userAgent: "Agent-One/1.0" });
    expect((await expectAlive(second, userId)).body.session).toMatchObject({
      ipAddress: "127.0.0.1",
      userAgent: "Agent-Two/2.0 (X11; Linux)",
    });
    // The agent of a later request does not overwrite the recorded one.
    const later = await get(url("/get-session"), { bearer: token, headers: { "user-agent": "Other/9" } });
    expect(later.body.session.userAgent).toBe("Agent-One/1.0");
  });

  it("an expired session (7 days + 1 s unused) reads as null and is refused elsewhere", async () => {
    const { token, userId } = await signUp();
    await expectAlive(token, userId);
    server.clock.advance(7 * DAY + SECOND);
    await expectDead(token);
    const byCookie = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(byCookie.text).toBe("null");
    expectUnauthorized(await get(url("/list-sessions"), { bearer: token }));
  });
});

describe("sliding expiry", () => {
  it("no write within the first day: expiresAt and updatedAt unchanged, no Set-Cookie", async () => {
    const { token } = await signUp();
    const first = (await sessionBy(token)).body.session;
    server.clock.advance(23 * HOUR);
    for (const opts of [{ cookie: cookieOf(token) }, { bearer: token }]) {
      const r = await get(url("/get-session"), opts);
      expect(r.body.session.expiresAt).toBe(first.expiresAt);
      expect(r.body.session.updatedAt).toBe(first.updatedAt);
      expect(r.headers.getSetCookie()).toEqual([]);
    }
    server.clock.advance(59 * MINUTE);
    const r = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(r.body.session.expiresAt).toBe(first.expiresAt);
    expect(r.headers.getSetCookie()).toEqual([]);
  });

  it("after 1 day the session moves to now + 7 days and the cookie is re-sent", async () => {
    const { token, userId } = await signUp();
    const createdMs = server.clock.now().getTime();
    server.clock.advance(DAY + MINUTE);
    const nowMs = server.clock.now().getTime();

    const r = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(r.status).toBe(200);
    expect(r.body.session.expiresAt).toBe(iso(nowMs + 7 * DAY));
    expect(r.body.session.updatedAt).toBe(iso(nowMs));
    expect(r.body.session.createdAt).toBe(iso(createdMs));
    expect(r.headers.getSetCookie()).toEqual([`${COOKIE}=${token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`]);

    // Persisted: a later read (bearer, no cookie involved) sees the new expiry, and does not extend again.
    server.clock.advance(HOUR);
    const again = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(again.body.session.expiresAt).toBe(iso(nowMs + 7 * DAY));
    expect(again.headers.getSetCookie()).toEqual([]);

    // Alive past its original expiry (created + 7 days) ...
    server.clock.set(new Date(createdMs + 7 * DAY + SECOND));
    await expectAlive(token, userId);
  });

  it("keeps extending across weeks while used, then dies 7 days after the last extension", async () => {
    const { token, userId } = await signUp();
    const startMs = server.clock.now().getTime();
    let lastExtendedMs = startMs;
    for (let week = 0; week < 5; week++) {
      server.clock.advance(6 * DAY);
      const nowMs = server.clock.now().getTime();
      const r = await get(url("/get-session"), { cookie: cookieOf(token) });
      expect(r.body?.user.id, `week ${week}`).toBe(userId);
      expect(r.body.session.expiresAt).toBe(iso(nowMs + 7 * DAY));
      expect(r.headers.getSetCookie()).toEqual([`${COOKIE}=${token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`]);
      lastExtendedMs = nowMs;
    }
    expect(lastExtendedMs - startMs).toBe(30 * DAY);
    server.clock.set(new Date(lastExtendedMs + 7 * DAY - SECOND));
    const stillAlive = await get(url("/get-session"), { bearer: token });
    expect(stillAlive.body?.user.id).toBe(userId);
    // That read extended it once more; leave it unused for 7 days + 1 s.
    server.clock.advance(7 * DAY + SECOND);
    await expectDead(token);
  });

  it("a bearer-authenticated request extends the session too", async () => {
    const { token } = await signUp();
    server.clock.advance(2 * DAY);
    const nowMs = server.clock.now().getTime();
    const r = await get(url("/get-session"), { bearer: token });
    expect(r.body.session.expiresAt).toBe(iso(nowMs + 7 * DAY));
    const persisted = await get(url("/get-session"), { bearer: token });
    expect(persisted.body.session.expiresAt).toBe(iso(nowMs + 7 * DAY));
  });

  it("any authenticated endpoint extends the session and re-sends the cookie", async () => {
    const { token } = await signUp();
    server.clock.advance(DAY + MINUTE);
    const nowMs = server.clock.now().getTime();
    const r = await get(url("/list-sessions"), { cookie: cookieOf(token) });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.getSetCookie()).toEqual([`${COOKIE}=${token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`]);
    expect(r.body).toHaveLength(1);
    expect(r.body[0].expiresAt).toBe(iso(nowMs + 7 * DAY));
  });

  it("rememberMe false: lives 1 day, is never extended, dead after 1 day + 1 s", async () => {
    const { token, userId } = await signUp({ rememberMe: false });
    const createdMs = server.clock.now().getTime();
    const first = (await expectAlive(token, userId)).body.session;
    expect(first.expiresAt).toBe(iso(createdMs + DAY));

    server.clock.advance(12 * HOUR);
    const mid = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(mid.body.session.expiresAt).toBe(iso(createdMs + DAY));
    expect(mid.headers.getSetCookie()).toEqual([]);

    server.clock.set(new Date(createdMs + DAY - SECOND));
    const late = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(late.body?.session.expiresAt).toBe(iso(createdMs + DAY));
    expect(late.headers.getSetCookie()).toEqual([]);

    server.clock.set(new Date(createdMs + DAY + SECOND));
    const dead = await get(url("/get-session"), { cookie: cookieOf(token) });
    expect(dead.text).toBe("null");
    // The dead session's cookie is cleared (better-auth's get-session does the same).
    expect(dead.headers.getSetCookie()).toEqual([`${COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`]);
  });

  it("rememberMe false on sign-in behaves the same, beside a normal session of the same user", async () => {
    const { email, token: long, userId } = await signUp();
    const short = await signIn(email, { rememberMe: false });
    server.clock.advance(DAY + SECOND);
    await expectDead(short);
    await expectAlive(long, userId);
  });
});

describe("GET /list-sessions", () => {
  it("lists the caller's active sessions only, with the contract's fields; only the caller's own raw token", async () => {
    const a = await signUp({}, { "user-agent": "A-1" });
    const a2 = await signIn(a.email, {}, { "user-agent": "A-2" });
    const a3 = await signIn(a.email, {}, { "user-agent": "A-3" });
    const b = await signUp({}, { "user-agent": "B-1" });

    const r = await get(url("/list-sessions"), { cookie: cookieOf(a.token) });
    expect(r.status, r.text).toBe(200);
    expect(Array.isArray(r.body)).toBe(true);
    expect(r.body).toHaveLength(3);
    for (const s of r.body) {
      expect(Object.keys(s).sort()).toEqual(SESSION_KEYS);
      expect(s.userId).toBe(a.userId);
      expect(s.ipAddress).toBe("127.0.0.1");
      expect(s.impersonatedBy).toBeNull();
      expect(s.expiresAt).toMatch(ISO);
    }
    expect(r.body.map((s: { userAgent: string }) => s.userAgent).sort()).toEqual(["A-1", "A-2", "A-3"]);
    // docs/wire-contract.md §2: the caller's own session carries its raw token, the others a handle.
    for (const t of [a2, a3, b.token]) expect(r.text).not.toContain(t);
    expect(r.body.filter((s: { token: string }) => s.token === a.token)).toHaveLength(1);
    expect(r.body.filter((s: { token: string }) => s.token.startsWith("sh."))).toHaveLength(2);

    // The ids are the ones get-session shows for each token.
    const ids = await Promise.all([a.token, a2, a3].map(async (t) => (await sessionBy(t)).body.session.id));
    expect(r.body.map((s: { id: string }) => s.id).sort()).toEqual([...ids].sort());

    const rb = await get(url("/list-sessions"), { bearer: b.token });
    expect(rb.body).toHaveLength(1);
    expect(rb.body[0]).toMatchObject({ userId: b.userId, userAgent: "B-1" });
  });

  it("leaves out expired sessions", async () => {
    const { email, token, userId } = await signUp();
    const short = await signIn(email, { rememberMe: false });
    const shortId = (await sessionBy(short)).body.session.id;
    const before = await get(url("/list-sessions"), { bearer: token });
    expect(before.body.map((s: { id: string }) => s.id)).toContain(shortId);
    expect(before.body).toHaveLength(2);

    server.clock.advance(DAY + SECOND);
    const after = await get(url("/list-sessions"), { bearer: token });
    expect(after.status).toBe(200);
    expect(after.body).toHaveLength(1);
    expect(after.body[0].userId).toBe(userId);
    expect(after.body[0].id).not.toBe(shortId);
  });

  it("401 UNAUTHORIZED without a session or with a bad one", async () => {
    expectUnauthorized(await get(url("/list-sessions")));
    expectUnauthorized(await get(url("/list-sessions"), { bearer: "A".repeat(43) }));
    expectUnauthorized(await get(url("/list-sessions"), { cookie: `${COOKIE}=garbage` }));
  });
});

describe("POST /revoke-session", () => {
  it("revokes one of the caller's sessions by token", async () => {
    const { email, token, userId } = await signUp();
    const other = await signIn(email);
    await expectAlive(other, userId); // read once first: a revocation must not be hidden by any cache
    const r = await post(url("/revoke-session"), { token: other }, { cookie: cookieOf(token) });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ status: true });
    await expectDead(other);
    await expectAlive(token, userId);
    const list = await get(url("/list-sessions"), { bearer: token });
    expect(list.body).toHaveLength(1);
  });

  it("revokes one of the caller's sessions by id (as list-sessions shows it)", async () => {
    const { email, token, userId } = await signUp();
    const other = await signIn(email);
    const otherId = (await expectAlive(other, userId)).body.session.id as string;
    const r = await post(url("/revoke-session"), { id: otherId }, { bearer: token });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ status: true });
    await expectDead(other);
    await expectAlive(token, userId);
    const list = await get(url("/list-sessions"), { bearer: token });
    expect(list.body.map((s: { id: string }) => s.id)).not.toContain(otherId);
  });

  it("can revoke the session used for the call", async () => {
    const { token } = await signUp();
    const id = (await sessionBy(token)).body.session.id as string;
    const r = await post(url("/revoke-session"), { id }, { bearer: token });
    expect(r.body).toEqual({ status: true });
    await expectDead(token);
  });

  it("cannot revoke another user's session, by token or by id", async () => {
    const attacker = await signUp();
    const victim = await signUp();
    const victimId = (await sessionBy(victim.token)).body.session.id as string;

    const byToken = await post(url("/revoke-session"), { token: victim.token }, { bearer: attacker.token });
    expect(byToken.status).toBeLessThan(500);
    const byId = await post(url("/revoke-session"), { id: victimId }, { cookie: cookieOf(attacker.token) });
    expect(byId.status).toBeLessThan(500);

    await expectAlive(victim.token, victim.userId);
    await expectAlive(attacker.token, attacker.userId);
    const list = await get(url("/list-sessions"), { bearer: victim.token });
    expect(list.body.map((s: { id: string }) => s.id)).toEqual([victimId]);
  });

  it("400 VALIDATION_ERROR without token or id", async () => {
    const { token } = await signUp();
    const r = await post(url("/revoke-session"), {}, { bearer: token });
    expect(r.status).toBe(400);
    expect(r.body.code).toBe("VALIDATION_ERROR");
  });

  it("401 UNAUTHORIZED without a session", async () => {
    const { token } = await signUp();
    const id = (await sessionBy(token)).body.session.id as string;
    expectUnauthorized(await post(url("/revoke-session"), { token }));
    expectUnauthorized(await post(url("/revoke-session"), { id }));
    expectUnauthorized(await post(url("/revoke-session"), { id }, { bearer: "B".repeat(43) }));
    // Nothing was revoked by the refused calls.
    expect((await sessionBy(token)).body?.session.id).toBe(id);
  });
});

describe("POST /revoke-sessions", () => {
  it("revokes every session of the caller, the current one included, and no one else's", async () => {
    const a = await signUp();
    const a2 = await signIn(a.email);
    const a3 = await signIn(a.email);
    const b = await signUp();
    for (const t of [a.token, a2, a3]) await expectAlive(t, a.userId);
    const r = await post(url("/revoke-sessions"), undefined, { cookie: cookieOf(a.token) });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ status: true });
    for (const t of [a.token, a2, a3]) await expectDead(t);
    await expectAlive(b.token, b.userId);
    expectUnauthorized(await get(url("/list-sessions"), { bearer: a.token }));
  });

  it("401 UNAUTHORIZED without a session", async () => {
    expectUnauthorized(await post(url("/revoke-sessions")));
    expectUnauthorized(await post(url("/revoke-sessions"), undefined, { bearer: "garbage-token-garbage-token" }));
  });
});

describe("POST /revoke-other-sessions", () => {
  it("revokes every other session of the caller; the current one survives", async () => {
    const a = await signUp();
    const a2 = await signIn(a.email);
    const a3 = await signIn(a.email, { rememberMe: false });
    const b = await signUp();
    const b2 = await signIn(b.email);
    const currentId = (await sessionBy(a2)).body.session.id as string;
    for (const t of [a.token, a3]) await expectAlive(t, a.userId);

    const r = await post(url("/revoke-other-sessions"), undefined, { bearer: a2 });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ status: true });
    await expectAlive(a2, a.userId);
    await expectDead(a.token);
    await expectDead(a3);
    await expectAlive(b.token, b.userId);
    await expectAlive(b2, b.userId);
    const list = await get(url("/list-sessions"), { cookie: cookieOf(a2) });
    expect(list.body.map((s: { id: string }) => s.id)).toEqual([currentId]);
  });

  it("401 UNAUTHORIZED without a session", async () => {
    expectUnauthorized(await post(url("/revoke-other-sessions")));
    expectUnauthorized(await post(url("/revoke-other-sessions"), undefined, { cookie: `${COOKIE}=${"C".repeat(43)}` }));
  });
});
