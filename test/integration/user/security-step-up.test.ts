import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type Portcullis, type PortcullisConfig } from "../../../src/index.ts";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { cookieFrom, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { PASSWORD, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * The step-up limit (docs/security.md "Step-up"): every route that checks the caller's current
 * password spends from one budget per user and per client address, kept in the rate-limit store.
 * The attack: one stolen session, guesses from many addresses (X-Forwarded-For with trustProxy),
 * on whichever password route has the loosest per-IP rule (delete-user: the default 100 per 10 s).
 * Counting is wall-clock (rate-limiter-flexible), 3 per 10 s: each test stays inside one window
 * and uses its own users and addresses.
 */

const CONFIG: PortcullisConfig = { rateLimit: { enabled: true }, trustProxy: true, user: { deleteUser: { enabled: true } } };
const WRONG = "not the password at all";
let ipCounter = 0;
const nextIp = () => `192.0.2.${++ipCounter}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer(CONFIG);
});
afterAll(async () => {
  await server?.close();
});

function expectStepUpLimited(res: Reply): void {
  expect(res.status, res.text).toBe(429);
  expect(res.body).toEqual({ code: "RATE_LIMITED", message: expect.any(String) });
  const retry = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retry)).toBe(true);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(10);
  expect(res.headers.get("x-retry-after")).toBe(res.headers.get("retry-after"));
}

/** Every route that checks the current password, each from a fresh address: the body carries `password`. */
const ROUTES: Array<{ path: string; body: (password: string) => Record<string, unknown> }> = [
  { path: "/verify-password", body: (password) => ({ password }) },
  { path: "/change-password", body: (password) => ({ currentPassword: password, newPassword: "a brand new password" }) },
  { path: "/delete-user", body: (password) => ({ password }) },
  { path: "/two-factor/enable", body: (password) => ({ password }) },
  { path: "/two-factor/disable", body: (password) => ({ password }) },
  { path: "/two-factor/get-totp-uri", body: (password) => ({ password }) },
  { path: "/two-factor/generate-backup-codes", body: (password) => ({ password }) },
];

/** Sign-up and sign-in each from an address of their own (sign-up and sign-in are limited per address). */
async function signUp(s: TestServer): Promise<SignedInUser> {
  const email = uniqueEmail("step-up");
  const res = await post(`${s.auth}/sign-up/email`, { name: "Step Up", email, password: PASSWORD }, { headers: from(nextIp()) });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id, email, token: res.body.token, cookie: cookieFrom(res.headers)!, user: res.body.user };
}
async function signIn(s: TestServer, email: string): Promise<SignedInUser> {
  const res = await post(`${s.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(nextIp()) });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id, email, token: res.body.token, cookie: cookieFrom(res.headers)!, user: res.body.user };
}

const call = (path: string, body: unknown, user: SignedInUser, ip = nextIp()) => post(`${server.auth}${path}`, body, { bearer: user.token, headers: from(ip) });

/** A user with two-factor on (enable with the right password, then a first TOTP code). */
async function enrolled(): Promise<SignedInUser> {
  const user = await signUp(server);
  const enabled = await call("/two-factor/enable", { password: PASSWORD }, user);
  expect(enabled.status, enabled.text).toBe(200);
  const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
  server.clock.advance(30 * SECOND);
  expect((await call("/two-factor/verify-totp", { code: totpCode(secret, server.clock.now().getTime()) }, user)).status).toBe(200);
  return user;
}

async function userExists(id: string): Promise<boolean> {
  const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select count(*) as n from users where id = ?", [id]);
  return Number(rows[0].n) === 1;
}

describe(`step-up limit (${testDialect})`, () => {
  it("one session guessing delete-user's password from many addresses gets 3 guesses, then 429 before any verify", async () => {
    const victim = await signUp(server);
    const replies: Reply[] = [];
    for (let i = 0; i < 10; i++) replies.push(await call("/delete-user", { password: WRONG }, victim));
    expect(replies.slice(0, 3).map((r) => r.body.code)).toEqual(["INVALID_PASSWORD", "INVALID_PASSWORD", "INVALID_PASSWORD"]);
    for (const r of replies.slice(3)) expectStepUpLimited(r);
    // The right password is refused too while the limit holds: nothing was verified, nothing deleted.
    expectStepUpLimited(await call("/delete-user", { password: PASSWORD }, victim));
    expect(await userExists(victim.id)).toBe(true);
  });

  it("concurrent guesses cannot share an attempt: of 12 at once from 12 addresses, exactly 3 are verified", async () => {
    const victim = await signUp(server);
    const replies = await Promise.all(Array.from({ length: 12 }, () => call("/verify-password", { password: WRONG }, victim)));
    expect(replies.filter((r) => r.status === 400)).toHaveLength(3);
    const limited = replies.filter((r) => r.status === 429);
    expect(limited).toHaveLength(9);
    for (const r of limited) expectStepUpLimited(r);
  });

  it("every password route spends from the same budget, and each answers 429 once it is spent", async () => {
    // Enrolled, so the two-factor routes that first ask for an enrollment reach the password check.
    const victim = await enrolled();
    expect((await call("/verify-password", { password: WRONG }, victim)).body.code).toBe("INVALID_PASSWORD");
    expect((await call("/change-password", ROUTES[1]!.body(WRONG), victim)).body.code).toBe("INVALID_PASSWORD");
    expect((await call("/two-factor/enable", { password: WRONG }, victim)).body.code).toBe("INVALID_PASSWORD");
    for (const route of ROUTES) {
      // The right password: refused before it is checked, on every route.
      expectStepUpLimited(await call(route.path, route.body(PASSWORD), victim));
    }
    // Nothing the right password would have done happened: the old password still signs in.
    expect((await post(`${server.auth}/sign-in/email`, { email: victim.email, password: PASSWORD }, { headers: from(nextIp()) })).status).toBe(200);
    expect(await userExists(victim.id)).toBe(true);
  });

  it("several sessions of the user share its budget (the count is the user's, not the session's)", async () => {
    const victim = await signUp(server);
    const sessions = [victim];
    for (let i = 0; i < 3; i++) sessions.push(await signIn(server, victim.email));
    const codes = [];
    for (const s of sessions) codes.push((await call("/verify-password", { password: WRONG }, s)).status);
    expect(codes).toEqual([400, 400, 400, 429]);
  });

  it("one address holding sessions of several users is limited across them (the address is counted too)", async () => {
    const ip = nextIp();
    const users = [await signUp(server), await signUp(server)];
    const first = [];
    for (let i = 0; i < 3; i++) first.push((await call("/delete-user", { password: WRONG }, users[0]!, ip)).status);
    expect(first).toEqual([400, 400, 400]);
    expectStepUpLimited(await call("/delete-user", { password: WRONG }, users[1]!, ip));
    // users[1] itself has spent nothing: from another address it is still heard.
    expect((await call("/delete-user", { password: WRONG }, users[1]!)).body.code).toBe("INVALID_PASSWORD");
  });

  it("a right password hands back its own attempt and clears no failure before it", async () => {
    const user = await signUp(server);
    const verify = (password: string) => call("/verify-password", { password }, user);
    expect((await verify(WRONG)).status).toBe(400);
    expect((await verify(WRONG)).status).toBe(400);
    for (let i = 0; i < 3; i++) expect((await verify(PASSWORD)).status).toBe(200);
    // Two failures still count: one more is heard, then the limit.
    expect((await verify(WRONG)).status).toBe(400);
    expectStepUpLimited(await verify(PASSWORD));
  });

  it("tRPC calls spend from the same budget", async () => {
    const user = await signUp(server);
    const viaTrpc = (path: string, body: unknown) => post(`${server.url}/api/trpc/${path}`, body, { bearer: user.token, headers: from(nextIp()) });
    expect((await viaTrpc("verifyPassword", { password: WRONG })).status).toBe(400);
    expect((await viaTrpc("twoFactor.disable", { password: WRONG })).status).toBe(400);
    expect((await call("/delete-user", { password: WRONG }, user)).status).toBe(400);
    const limited = await viaTrpc("deleteUser", { password: PASSWORD });
    expect(limited.status, limited.text).toBe(429);
    expect(limited.body.error.data.authCode).toBe("RATE_LIMITED");
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  });

  it("a two-factor user's routes that take the password count too (disable, backup codes)", async () => {
    const user = await enrolled();
    expect((await call("/two-factor/disable", { password: WRONG }, user)).body.code).toBe("INVALID_PASSWORD");
    expect((await call("/two-factor/generate-backup-codes", { password: WRONG }, user)).body.code).toBe("INVALID_PASSWORD");
    expect((await call("/two-factor/disable", { password: WRONG }, user)).body.code).toBe("INVALID_PASSWORD");
    expectStepUpLimited(await call("/two-factor/disable", { password: PASSWORD }, user));
  });
});

describe(`step-up limit across instances (${testDialect})`, () => {
  const peers: Portcullis[] = [];
  afterEach(async () => {
    await Promise.all(peers.splice(0).map((p) => p.close()));
  });

  it("two instances on one database share the user's count (storage: database)", async () => {
    const shared: PortcullisConfig = { ...CONFIG, rateLimit: { enabled: true, storage: "database" } };
    const a = await startTestServer(shared);
    try {
      const peer = await createPortcullis({ databaseUrl: a.db.url, secret: "test-secret-test-secret-test-secret-0123", logLevel: "silent", clock: a.clock, ...shared });
      peers.push(peer);
      const peerAuth = `${await peer.listen(0, "127.0.0.1")}/api/auth`;
      const user = await signUp(a);
      const on = (auth: string) => post(`${auth}/verify-password`, { password: WRONG }, { bearer: user.token, headers: from(nextIp()) });
      expect((await on(a.auth)).status).toBe(400);
      expect((await on(peerAuth)).status).toBe(400);
      expect((await on(a.auth)).status).toBe(400);
      expectStepUpLimited(await on(peerAuth));
    } finally {
      await a.close();
    }
  });
});

describe(`step-up limit when its store fails (${testDialect})`, () => {
  it("counts in this instance's memory instead (never unlimited, never a 5xx), and says so once in the log", async () => {
    const log = captureLog("error");
    const s = await startTestServer({ ...CONFIG, rateLimit: { enabled: true, storage: "database" } }, { logger: log.logger });
    try {
      const user = await signUp(s);
      await s.portcullis.app.orm.em.fork().getConnection().execute("drop table rate_limits");
      const statuses = [];
      for (let i = 0; i < 5; i++) statuses.push((await post(`${s.auth}/verify-password`, { password: WRONG }, { bearer: user.token, headers: from(nextIp()) })).status);
      expect(statuses).toEqual([400, 400, 400, 429, 429]);
      const failures = log.lines().filter((l) => l.msg === "step-up limit store failed: counting in memory on this instance");
      expect(failures).toHaveLength(1);
      expect(failures[0]!.err).toBeDefined();
    } finally {
      await s.close();
    }
  });
});

describe("step-up limit switched off", () => {
  it("rateLimit.enabled false, or the /verify-password rule false, leaves the password routes unlimited", async () => {
    for (const config of [{ rateLimit: { enabled: false } }, { rateLimit: { enabled: true, rules: { "/verify-password": false as const } } }]) {
      const s = await startTestServer({ ...config, trustProxy: true });
      try {
        const user = await signUp(s);
        const statuses = [];
        for (let i = 0; i < 5; i++) statuses.push((await post(`${s.auth}/verify-password`, { password: WRONG }, { bearer: user.token, headers: from(nextIp()) })).status);
        expect(statuses).toEqual([400, 400, 400, 400, 400]);
      } finally {
        await s.close();
      }
    }
  });
});
