import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../../src/crypto/tokens.ts";
import { Account, DeviceCode, Session, User, Verification } from "../../../src/db/entities/index.ts";
import { createAdmin } from "../../../src/modules/admin/bootstrap.service.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { SECOND } from "../../harness/clock.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Races: concurrent requests on one resource end with exactly one winner and a
 * consistent database. Already covered elsewhere, and not repeated here: concurrent duplicate
 * sign-ups (sign-up.test.ts, username.test.ts), racing uses of one reset token
 * (password-reset.test.ts), concurrent polls of one device code (device.test.ts). This file
 * adds what they leave out: a ban (or a removal) landing while a sign-in verifies the password,
 * and the database state after the token races (the others check the HTTP answers).
 */

const PASSWORD = "race-password-123";
let server: TestServer;
let adminToken: string;
const log = captureLog("info");
const stats = { rounds: 0, requests: 0 };

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const em = () => server.portcullis.app.orm.em.fork();

async function signUp(email = uniqueEmail("race")): Promise<{ id: string; email: string; token: string }> {
  const res = await post(`${server.auth}/sign-up/email`, { name: "Racer", email, password: PASSWORD });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id, email, token: res.headers.get("set-auth-token")! };
}

function signIn(email: string): Promise<Reply> {
  stats.requests += 1;
  return post(`${server.auth}/sign-in/email`, { email, password: PASSWORD });
}

function admin(path: string, body: unknown): Promise<Reply> {
  stats.requests += 1;
  return post(`${server.auth}/admin/${path}`, body, { headers: bearer(adminToken) });
}

async function sessionsOf(userId: string): Promise<number> {
  return em().count(Session, { user: userId });
}

async function sessionWorks(token: string | null): Promise<boolean> {
  if (!token) return false;
  const res = await get(`${server.auth}/get-session`, { headers: bearer(token) });
  return res.status === 200 && res.body !== null;
}

beforeAll(async () => {
  server = await startTestServer({}, { logger: log.logger });
  const email = uniqueEmail("race-admin");
  await signUp(email);
  await createAdmin(em(), server.portcullis.app.config, { email });
  const res = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD });
  adminToken = res.headers.get("set-auth-token")!;
});

afterAll(async () => {
  await server?.close();
  console.log(`[races ${testDialect}] ${stats.rounds} rounds, ${stats.requests} racing requests`);
});

/** Delays (ms) after the sign-in is sent at which the other request goes out: before, during and after the argon2 verify. */
const OFFSETS = [0, 2, 5, 8, 12, 16, 20, 25, 30, 40];

describe(`ban during sign-in (${testDialect})`, () => {
  it("the ban always stands: the sign-in is refused (403), or its session is ended by the ban; no session of the banned user survives", async () => {
    const outcomes = { refused: 0, endedByBan: 0 };
    for (const offset of OFFSETS) {
      stats.rounds += 1;
      const user = await signUp();
      const signingIn = signIn(user.email);
      await sleep(offset);
      const [signed, banned] = await Promise.all([signingIn, admin("ban-user", { userId: user.id, banReason: "race" })]);
      expect(banned.status, banned.text).toBe(200);
      const where = `offset ${offset} ms: sign-in ${signed.status} ${signed.text.slice(0, 200)}`;
      if (signed.status === 200) {
        outcomes.endedByBan += 1;
        expect(await sessionWorks(signed.headers.get("set-auth-token")), where).toBe(false);
      } else {
        outcomes.refused += 1;
        expect(signed.status, where).toBe(403);
        expect(signed.body.code, where).toBe("BANNED_USER");
      }
      const row = await em().findOneOrFail(User, { id: user.id });
      expect(row.banned, where).toBe(true);
      expect(await sessionsOf(user.id), where).toBe(0);
      // and every later sign-in is refused
      expect((await signIn(user.email)).status, where).toBe(403);
    }
    console.log(`[races ${testDialect}] ban during sign-in: ${JSON.stringify(outcomes)}`);
  });

  it("a new ban racing the sign-in that lifts an expired one: the new ban stands", async () => {
    for (const offset of OFFSETS) {
      stats.rounds += 1;
      const user = await signUp();
      expect((await admin("ban-user", { userId: user.id, banExpiresIn: 1 })).status).toBe(200);
      server.clock.advance(2 * SECOND); // the first ban has expired: the next sign-in lifts it
      const signingIn = signIn(user.email);
      await sleep(offset);
      const [signed, banned] = await Promise.all([signingIn, admin("ban-user", { userId: user.id, banReason: "again" })]);
      expect(banned.status, banned.text).toBe(200);
      const where = `offset ${offset} ms: sign-in ${signed.status} ${signed.text.slice(0, 200)}`;
      expect([200, 403], where).toContain(signed.status);
      if (signed.status === 200) expect(await sessionWorks(signed.headers.get("set-auth-token")), where).toBe(false);
      const row = await em().findOneOrFail(User, { id: user.id });
      expect(row.banned, where).toBe(true);
      expect(row.banReason, where).toBe("again");
      expect(row.banExpires, where).toBeNull();
      expect(await sessionsOf(user.id), where).toBe(0);
    }
  });

  it("a user removed while signing in: the sign-in is refused (401) or its session goes with the user; never a 500, no orphan rows", async () => {
    for (const offset of OFFSETS) {
      stats.rounds += 1;
      const user = await signUp();
      const signingIn = signIn(user.email);
      await sleep(offset);
      const [signed, removed] = await Promise.all([signingIn, admin("remove-user", { userId: user.id })]);
      expect(removed.status, removed.text).toBe(200);
      const where = `offset ${offset} ms: sign-in ${signed.status} ${signed.text.slice(0, 200)}`;
      expect([200, 401], where).toContain(signed.status);
      if (signed.status === 200) expect(await sessionWorks(signed.headers.get("set-auth-token")), where).toBe(false);
      expect(await em().count(User, { id: user.id }), where).toBe(0);
      expect(await em().count(Account, { user: user.id }), where).toBe(0);
      expect(await sessionsOf(user.id), where).toBe(0);
    }
  });
});

describe(`the database after token races (${testDialect})`, () => {
  it("one device code polled by many at once: one token, one session, and the code is gone", async () => {
    for (let round = 0; round < 3; round++) {
      stats.rounds += 1;
      const user = await signUp();
      const code = await post(`${server.auth}/device/code`, { client_id: "race-tv" });
      expect(code.status, code.text).toBe(200);
      const cookie = `portcullis.session_token=${user.token}`;
      expect((await get(`${server.auth}/device?user_code=${code.body.user_code}`, { cookie })).status).toBe(200);
      expect((await post(`${server.auth}/device/approve`, { userCode: code.body.user_code }, { cookie })).status).toBe(200);
      const before = await sessionsOf(user.id);
      const polls = await Promise.all(
        Array.from({ length: 8 }, () => {
          stats.requests += 1;
          return post(`${server.auth}/device/token`, {
            grant_type: "urn:ietf:params:oauth:grant-type:device_code",
            device_code: code.body.device_code,
            client_id: "race-tv",
          });
        }),
      );
      const winners = polls.filter((p) => p.status === 200);
      expect(winners, polls.map((p) => `${p.status} ${p.text}`).join("\n")).toHaveLength(1);
      for (const p of polls.filter((p) => p.status !== 200)) expect(p.body.error).toBe("invalid_grant");
      expect(await sessionsOf(user.id)).toBe(before + 1);
      expect(await sessionWorks(winners[0]!.body.access_token)).toBe(true);
      expect(await em().count(DeviceCode, { userCode: String(code.body.user_code).replace("-", "") })).toBe(0);
    }
  });

  it("one reset token used by many at once: one new password, the token row gone, the old sessions ended", async () => {
    for (let round = 0; round < 3; round++) {
      stats.rounds += 1;
      const user = await signUp();
      await post(`${server.auth}/request-password-reset`, { email: user.email });
      await server.portcullis.app.mailer.settle();
      const link = log
        .lines()
        .filter((l) => l.mail?.to === user.email)
        .map((l) => String(l.mail.link))
        .find((l) => l.includes("/reset-password/"))!;
      const token = /\/reset-password\/([^?/]+)/.exec(link)![1]!;
      expect(await em().count(Verification, { identifier: sha256(token) })).toBe(1);
      const passwords = Array.from({ length: 6 }, (_, i) => `new-password-${round}-${i}`);
      const replies = await Promise.all(
        passwords.map((newPassword) => {
          stats.requests += 1;
          return post(`${server.auth}/reset-password`, { token, newPassword });
        }),
      );
      const won = replies.flatMap((r, i) => (r.status === 200 ? [passwords[i]!] : []));
      expect(won, replies.map((r) => `${r.status} ${r.text}`).join("\n")).toHaveLength(1);
      for (const r of replies.filter((r) => r.status !== 200)) expect(r.body.code).toBe("INVALID_TOKEN");
      // the token row is gone and cannot be used again, the sign-up session is over, only the winner's password signs in
      expect(await em().count(Verification, { identifier: sha256(token) })).toBe(0);
      expect((await post(`${server.auth}/reset-password`, { token, newPassword: "one-more-password" })).status).toBe(400);
      expect(await sessionWorks(user.token)).toBe(false);
      const accounts = await em().find(Account, { user: user.id });
      expect(accounts).toHaveLength(1);
      for (const p of passwords) {
        const res = await post(`${server.auth}/sign-in/email`, { email: user.email, password: p });
        expect(res.status, p).toBe(p === won[0] ? 200 : 401);
      }
    }
  });
});
