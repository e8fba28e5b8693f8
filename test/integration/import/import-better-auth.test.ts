/**
 * Moving over from better-auth: a real better-auth 1.6 database (test/harness/import-helpers.ts)
 * imported with importBetterAuth, then used through the official better-auth client against
 * Portcullis: old passwords sign in (and become argon2id), old session tokens get the session as
 * Bearer and as cookie, provider tokens open, a mailed reset link works, bans and roles hold.
 * Sources: SQLite, and PostgreSQL when it answers; the target is the run's dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { MikroORM } from "@mikro-orm/core";
import { Account, Session, User } from "../../../src/db/entities/index.ts";
import { importBetterAuth, importedId, type ImportProgress, type ImportSummary } from "../../../src/import/index.ts";
import { openTokens } from "../../../src/modules/oauth/tokens.ts";
import { createAead, keyringFromSecrets } from "../../../src/crypto/aead.ts";
import type { MailSendInput } from "../../../src/mail/types.ts";
import { Actor } from "../../compat/actor.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { startTimedServer } from "../../harness/timed-server.ts";
import { BETTER_AUTH_SECRET, buildBetterAuthSource, pgAnswers, type BetterAuthSource } from "../../harness/import-helpers.ts";

const OUR_SECRET = "portcullis-secret-portcullis-secret-0123";
const pgUp = await pgAnswers();

/** The config a migrated app runs with: its own secret first, better-auth's kept for signed tokens, better-auth's cookie name. */
const mails: MailSendInput[] = [];

function startTarget(): Promise<TestServer> {
  return startTestServer(
    {
      email: { send: (mail) => void mails.push(mail) },
      secret: undefined,
      secrets: [OUR_SECRET, BETTER_AUTH_SECRET],
      cookiePrefix: "better-auth",
      providers: { github: { type: "github", clientId: "gh-client", clientSecret: "gh-secret" } },
    },
    { ownOrigin: true },
  );
}

function importInto(server: TestServer, source: BetterAuthSource, extra: { dryRun?: boolean; batchSize?: number; onProgress?: (p: ImportProgress) => void } = {}) {
  const { config, orm } = server.portcullis.app;
  return importBetterAuth({ from: source.url, config, orm, ...extra });
}

const passwordOf = async (orm: MikroORM, userId: string) =>
  (await orm.em.fork().findOneOrFail(Account, { user: importedId(userId), providerId: "credential" })).password!;

describe.each([
  { source: "sqlite" as const, run: true },
  { source: "postgres" as const, run: pgUp },
])("import from a better-auth database on $source", ({ source: dialect, run }) => {
  let source: BetterAuthSource;
  let server: TestServer;
  let summary: ImportSummary;
  const progress: ImportProgress[] = [];

  beforeAll(async () => {
    if (!run) return;
    source = await buildBetterAuthSource(dialect);
    server = await startTarget();
    // Batches of 2: every table takes several pages and transactions.
    summary = await importInto(server, source, { batchSize: 2, onProgress: (p) => progress.push(p) });
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  it.runIf(run)("imports users, accounts, live sessions and the reset link; says what it skipped and why", () => {
    const { user, account, session, verification } = summary.tables;
    expect(user).toMatchObject({ total: 5, imported: 5, skipped: 0, failed: 0 });
    expect(user.notes).toEqual({ "two-factor on: TOTP not imported, the second step is the emailed code until the user enrolls again": 1 });
    expect(account).toMatchObject({ total: 5, imported: 5, skipped: 0, failed: 0 });
    expect(session).toMatchObject({ total: 7, imported: 6, skipped: 1, failed: 0, skippedReasons: { expired: 1 } });
    expect(verification).toMatchObject({ total: 2, imported: 1, skipped: 1, failed: 0 });
    expect(verification.skippedReasons).toEqual({ "OAuth sign-in in flight (expires within minutes)": 1 });
    expect(summary.dryRun).toBe(false);
    expect(summary.source.dialect).toBe(dialect === "sqlite" ? "sqlite" : "postgresql");
    // Progress: each table announced, then its pages, ending at its total.
    const users = progress.filter((p) => p.table === "user");
    expect(users.map((p) => p.done)).toEqual([0, 2, 4, 5]);
    expect(summary.notImported).toEqual([{ table: "twoFactor", rows: 1, reason: expect.stringMatching(/^TOTP secrets/) }]);
    expect(progress.at(-1)).toEqual({ table: "verification", done: 2, total: 2 });
  });

  it.runIf(run)("signs in with the old password through the better-auth client; the hash becomes argon2id; the next sign-in works", async () => {
    const { orm } = server.portcullis.app;
    expect(await passwordOf(orm, source.bob.id)).toMatch(/^[0-9a-f]{32}:[0-9a-f]{128}$/);
    const bob = new Actor(server.url, "bob");
    const first = await bob.client.signIn.email({ email: source.bob.email, password: source.bob.password });
    expect(first.error).toBeNull();
    expect(first.data?.user.id).toBe(importedId(source.bob.id));
    expect(await passwordOf(orm, source.bob.id)).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    const again = await new Actor(server.url, "bob again").client.signIn.email({ email: source.bob.email, password: source.bob.password });
    expect(again.error).toBeNull();
    const wrong = await new Actor(server.url, "mallory").client.signIn.email({ email: source.bob.email, password: "not-bobs-password" });
    expect(wrong.error?.status).toBe(401);
  });

  it.runIf(run)("a wrong password against a kept scrypt hash fails and leaves the hash alone", async () => {
    const { orm } = server.portcullis.app;
    const before = await passwordOf(orm, source.alice.id);
    const res = await new Actor(server.url, "mallory").client.signIn.email({ email: source.alice.email, password: "alice-wrong-password" });
    expect(res.error?.status).toBe(401);
    expect(await passwordOf(orm, source.alice.id)).toBe(before);
  });

  it.runIf(run)("a failed sign-in takes as long for an imported scrypt account as for an argon2id one or an unknown address", async () => {
    // The service's own time per answer (test/harness/timed-server.ts): robust on a loaded machine.
    const timed = await startTimedServer(server.portcullis.handler);
    const path = `${server.portcullis.app.config.basePath}/sign-in/email`;
    try {
      const attempt = async (email: string) => {
        const res = await timed.post(path, { email, password: "wrong-password-123" }, { origin: server.url });
        expect(res.status, res.text).toBe(401);
        return res.ms;
      };
      const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
      const kinds = { scrypt: source.alice.email, argon2id: source.bob.email, unknown: "nobody-here@example.com" } as const;
      const times: Record<keyof typeof kinds, number[]> = { scrypt: [], argon2id: [], unknown: [] };
      for (const email of Object.values(kinds)) await attempt(email); // warm-up: the dummy hash, prepared statements
      let spread = Infinity;
      // Rounds in a shuffled order until the medians agree within 30% (a busy machine needs a few).
      for (let round = 0; round < 40 && spread > 0.3; round++) {
        for (const kind of (Object.keys(kinds) as (keyof typeof kinds)[]).sort(() => Math.random() - 0.5)) times[kind].push(await attempt(kinds[kind]));
        if (round < 5) continue;
        const medians = Object.values(times).map(median);
        spread = (Math.max(...medians) - Math.min(...medians)) / Math.max(...medians);
      }
      expect(spread, JSON.stringify(Object.fromEntries(Object.entries(times).map(([k, v]) => [k, Math.round(median(v))])))).toBeLessThanOrEqual(0.3);
      expect(await passwordOf(server.portcullis.app.orm, source.alice.id)).toMatch(/^[0-9a-f]{32}:/); // still not upgraded
    } finally {
      await timed.close();
    }
  }, 120_000);

  it.runIf(run)("keeps the username plugin's columns: sign-in by username, displayUsername as typed", async () => {
    const alice = new Actor(server.url, "alice");
    const res = await alice.client.signIn.username({ username: source.alice.displayUsername, password: source.alice.password });
    expect(res.error).toBeNull();
    expect(res.data?.user).toMatchObject({ username: source.alice.username, displayUsername: source.alice.displayUsername, role: "admin" });
  });

  it.runIf(run)("old session tokens work: bare and signed as Bearer, the signed cookie under better-auth's cookie name", async () => {
    const viaBearer = async (token: string) => {
      const actor = new Actor(server.url, "old client");
      actor.token = token;
      return (await actor.client.getSession()).data;
    };
    const bare = await viaBearer(source.aliceSession.raw);
    expect(bare?.user.email).toBe(source.alice.email);
    expect(bare?.session.token).toBe(source.aliceSession.raw);
    expect((await viaBearer(source.aliceSession.signed))?.user.email).toBe(source.alice.email);
    const cookie = await get(`${server.auth}/get-session`, { cookie: `better-auth.session_token=${encodeURIComponent(source.aliceSession.signed)}` });
    expect(cookie.body?.user?.email).toBe(source.alice.email);
    // A signature under another secret, or a made-up token, is no session.
    const forged = `${source.aliceSession.raw}.${"A".repeat(43)}=`;
    expect(await viaBearer(forged)).toBeNull();
    // The session store holds the digest only.
    const row = await server.portcullis.app.orm.em.fork().findOne(Session, { user: importedId(source.alice.id) });
    expect(row?.tokenHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it.runIf(run)("provider tokens are sealed at rest and handed out by get-access-token", async () => {
    const { app } = server.portcullis;
    const account = await app.orm.em.fork().findOneOrFail(Account, { user: importedId(source.carol.id), providerId: "github" });
    expect(account.accountId).toBe("4242");
    expect(account.accessToken).not.toContain(source.carol.accessToken);
    expect(openTokens(createAead(keyringFromSecrets(app.secrets)), account)).toMatchObject({ accessToken: source.carol.accessToken, refreshToken: source.carol.refreshToken });
    const res = await post(`${server.auth}/get-access-token`, { providerId: "github" }, { bearer: source.carol.sessionToken });
    expect(res.status, res.text).toBe(200);
    expect(res.body.accessToken).toBe(source.carol.accessToken);
  });

  it.runIf(run)("the reset link better-auth mailed still resets the password here", async () => {
    const newPassword = "bob-brand-new-password";
    const res = await post(`${server.auth}/reset-password`, { token: source.bobResetToken, newPassword }, { headers: { origin: server.url } });
    expect(res.status, res.text).toBe(200);
    const signedIn = await new Actor(server.url, "bob").client.signIn.email({ email: source.bob.email, password: newPassword });
    expect(signedIn.error).toBeNull();
  });

  it.runIf(run)("admin plugin columns hold: the ban refuses sign-in, the admin role lists the users", async () => {
    const dave = await new Actor(server.url, "dave").client.signIn.email({ email: source.dave.email, password: source.dave.password });
    expect(dave.error?.status).toBe(403);
    expect(dave.error?.code).toBe("BANNED_USER");
    const alice = new Actor(server.url, "alice");
    await alice.client.signIn.email({ email: source.alice.email, password: source.alice.password });
    const list = await alice.client.admin.listUsers({ query: { limit: 10 } });
    expect(list.error).toBeNull();
    expect(list.data?.users.map((u) => u.email).sort()).toEqual([source.alice.email, source.bob.email, "carol@example.com", source.dave.email, source.erin.email]);
    expect(list.data?.users.find((u) => u.email === source.dave.email)).toMatchObject({ banned: true, banReason: "spam" });
  });

  it.runIf(run)("two-factor stays on: the password alone is not enough, the emailed code finishes the sign-in", async () => {
    const erin = new Actor(server.url, "erin");
    const first = await erin.client.signIn.email({ email: source.erin.email, password: source.erin.password });
    expect(first.data).toMatchObject({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
    expect(await erin.client.getSession().then((r) => r.data)).toBeNull();
    expect((await erin.client.twoFactor.sendOtp()).error).toBeNull();
    await server.portcullis.app.mailer.settle();
    const code = mails.findLast((m) => m.to === source.erin.email && m.kind === "twoFactorOtp")?.code;
    expect(code).toMatch(/^\d{6}$/);
    const verified = await erin.client.twoFactor.verifyOtp({ code: code! });
    expect(verified.error).toBeNull();
    expect((await erin.client.getSession()).data?.user.email).toBe(source.erin.email);
  });

  it.runIf(run)("re-running imports nothing and brings nothing back: a revoked session and a used link stay gone", async () => {
    const { orm } = server.portcullis.app;
    const hashBefore = await passwordOf(orm, source.alice.id);
    const again = await importInto(server, source);
    for (const table of ["user", "account", "session", "verification"] as const) {
      expect(again.tables[table].imported, table).toBe(0);
      expect(again.tables[table].failed, table).toBe(0);
    }
    const gone = "imported before and removed in Portcullis since: not brought back";
    expect(again.tables.user.skippedReasons).toEqual({ "already imported": 5 });
    expect(again.tables.account.skippedReasons).toEqual({ "already imported": 5 });
    // bob's reset here revoked his sessions and used his link up: the ledger keeps them out.
    expect(again.tables.session.skippedReasons).toEqual({ "already imported": 5, [gone]: 1, expired: 1 });
    expect(again.tables.verification.skippedReasons).toEqual({ [gone]: 1, "OAuth sign-in in flight (expires within minutes)": 1 });
    expect(await orm.em.fork().count(User, {})).toBe(5);
    expect(await passwordOf(orm, source.alice.id)).toBe(hashBefore);
    const reset = await post(`${server.auth}/reset-password`, { token: source.bobResetToken, newPassword: "bob-third-password" }, { headers: { origin: server.url } });
    expect(reset.status).toBe(400);
  });

  it.runIf(run)("a user deleted here is not brought back by a re-run", async () => {
    const { orm } = server.portcullis.app;
    await orm.em.fork().nativeDelete(User, { id: importedId(source.dave.id) });
    const again = await importInto(server, source);
    expect(again.tables.user).toMatchObject({ imported: 0, failed: 0 });
    expect(again.tables.user.skippedReasons["imported before and removed in Portcullis since: not brought back"]).toBe(1);
    expect(await orm.em.fork().count(User, { id: importedId(source.dave.id) })).toBe(0);
  });
});

describe.each([{ source: "sqlite" as const }])("dry run ($source source)", ({ source: dialect }) => {
  let source: BetterAuthSource;
  let server: TestServer;
  beforeAll(async () => {
    source = await buildBetterAuthSource(dialect);
    server = await startTarget();
  });
  afterAll(async () => {
    await server?.close();
    await source?.drop();
  });

  it("reports what it would import and writes nothing", async () => {
    const summary = await importInto(server, source, { dryRun: true });
    expect(summary.dryRun).toBe(true);
    expect(summary.tables.user.imported).toBe(5);
    expect(summary.tables.session.imported).toBe(6);
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(User, {})).toBe(0);
    expect(await em.count(Account, {})).toBe(0);
    expect(await em.count(Session, {})).toBe(0);
    // A real run afterwards imports everything.
    const real = await importInto(server, source);
    expect(real.tables.user.imported).toBe(5);
  });

  it("a user whose email belongs to someone else here fails, with its rows, and says why", async () => {
    const other = await startTarget();
    try {
      const taken = await post(`${other.auth}/sign-up/email`, { name: "Bob here", email: source.bob.email, password: "another-password" }, { headers: { origin: other.url } });
      expect(taken.status, taken.text).toBe(200);
      const summary = await importInto(other, source);
      expect(summary.tables.user).toMatchObject({ imported: 4, failed: 1, failedReasons: { "email already belongs to another Portcullis user": 1 } });
      expect(summary.tables.user.failures).toEqual([{ id: source.bob.id, reason: "email already belongs to another Portcullis user" }]);
      expect(summary.tables.account.failedReasons).toEqual({ "its user is not in Portcullis (not imported)": 1 });
      expect(summary.tables.verification.failedReasons).toEqual({ "its user is not in Portcullis (not imported)": 1 });
      // Nothing of the old bob reached the new one: his password here is still his own.
      const signIn = await post(`${other.auth}/sign-in/email`, { email: source.bob.email, password: source.bob.password }, { headers: { origin: other.url } });
      expect(signIn.status).toBe(401);
    } finally {
      await other.close();
    }
  });

  it("refuses what is not a better-auth database, in one line", async () => {
    const { config, orm } = server.portcullis.app;
    await expect(importBetterAuth({ from: "sqlite:/nonexistent/ba.db", config, orm })).rejects.toThrow(/no SQLite database at/);
    await expect(importBetterAuth({ from: "mysql://x", config, orm })).rejects.toThrow(/--from must be/);
  });
});
