import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { startPgProxy, type PgProxy, type Statement } from "../harness/pg-proxy.ts";
import { configFile, getJson, killAll, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * Sign-in at the argon2 limit. What password sign-in costs the database on
 * PostgreSQL, where every statement is a round trip: the service runs with its DATABASE_URL
 * pointing at a wire-protocol proxy (test/harness/pg-proxy.ts) that counts the statements it
 * sends. A sign-in without two-factor is the credential lookup and one INSERT … SELECT that
 * writes the session only if the user is not banned at that moment (the user row read FOR
 * SHARE), then the sign-in's audit record (one prepared insert, docs/operations.md "Audit");
 * a refused sign-in is the lookup and its audit record; get-session with the cache off is the one lookup. And that one statement waits for a
 * ban or a removal in progress, then refuses.
 *
 * PostgreSQL only: on SQLite a statement is an in-process call of ~10 µs, not a round trip, and
 * the same code path (session-store insertSessionUnlessBanned) runs there on the ORM's writer
 * connection; test/integration/platform/races.test.ts covers its outcomes on both dialects.
 */

const PASSWORD = "statements-pw-1";
let db: TestDatabase;
let proxy: PgProxy;
let config: ReturnType<typeof configFile>;
let server: ServerProcess;

beforeAll(async () => {
  if (testDialect !== "postgres") return;
  db = await createTestDatabase();
  proxy = await startPgProxy();
  // Rate limits in memory (and loose: one client signs in many times) and the session cache
  // off: every statement counted is the request's own.
  const loose = { window: 10, max: 1000 };
  config = configFile({
    logLevel: "warn",
    rateLimit: { enabled: true, storage: "memory", rules: { "/sign-in/*": loose, "/sign-up/*": loose } },
    session: { cacheTtlMs: 0 },
    sweeper: { intervalSec: 0 },
  });
  server = await startServerProcess({ databaseUrl: proxy.urlFor(db.url), config: config.path });
}, 120_000);

afterAll(async () => {
  await server?.stop();
  killAll();
  config?.remove();
  await proxy?.close();
  await db?.drop();
}, 60_000);

let seq = 0;
const email = () => `statements.${Date.now().toString(36)}.${++seq}@example.test`;

/** The statements one request sent, from its start to its answer. */
async function statementsOf<T>(request: () => Promise<T>): Promise<{ result: T; statements: Statement[] }> {
  proxy.reset();
  const result = await request();
  return { result, statements: proxy.statements() };
}

const show = (statements: Statement[]) => statements.map((s) => `#${s.connection} ${s.kind} ${s.sql.slice(0, 120)}`).join("\n");

async function signUp(): Promise<{ id: string; email: string; token: string }> {
  const address = email();
  const res = await postJson(`${server.auth}/sign-up/email`, { name: "Counted", email: address, password: PASSWORD, username: `counted_${seq}` });
  expect(res.status).toBe(200);
  return { id: res.body.user.id, email: address, token: res.headers.get("set-auth-token")! };
}

async function admin(sql: string, values: unknown[]) {
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return await client.query(sql, values);
  } finally {
    await client.end();
  }
}

describe.skipIf(testDialect !== "postgres")("statements per request on PostgreSQL, counted on the wire", () => {
  it("sign-in (email or username, no two-factor): exactly 3 statements, the lookup, the insert and the audit record; get-session with the cache off: 1", async () => {
    const user = await signUp();
    // Warm-up: pool connections open, named statements prepared.
    expect((await postJson(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD })).status).toBe(200);
    expect((await getJson(`${server.auth}/get-session`, { authorization: `Bearer ${user.token}` })).status).toBe(200);

    const byEmail = await statementsOf(() => postJson(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }));
    expect(byEmail.result.status).toBe(200);
    expect(byEmail.statements, show(byEmail.statements)).toHaveLength(3);
    expect(byEmail.statements[0]!.sql).toMatch(/^SELECT .* FROM users u JOIN accounts a /);
    expect(byEmail.statements[1]!.sql).toMatch(/^INSERT INTO sessions .* FROM users u WHERE .* FOR SHARE OF u$/);
    expect(byEmail.statements[2]!.sql).toMatch(/^INSERT INTO audit_events /);

    const byUsername = await statementsOf(() => postJson(`${server.auth}/sign-in/username`, { username: `counted_${seq}`, password: PASSWORD }));
    expect(byUsername.result.status).toBe(200);
    expect(byUsername.statements, show(byUsername.statements)).toHaveLength(3);

    const session = await statementsOf(() => getJson(`${server.auth}/get-session`, { authorization: `Bearer ${byEmail.result.headers.get("set-auth-token")}` }));
    expect(session.result.body.user.id).toBe(user.id);
    expect(session.statements.length, show(session.statements)).toBeLessThanOrEqual(1);
    console.log(`[statements] sign-in/email ${byEmail.statements.length}, sign-in/username ${byUsername.statements.length}, get-session (cache off) ${session.statements.length}`);
  });

  it("sign-up: one statement (the user, its credential account and its session); a taken email: that one statement, refused", async () => {
    await signUp(); // warm-up: the named statement is prepared
    const address = email();
    const up = await statementsOf(() => postJson(`${server.auth}/sign-up/email`, { name: "Counted", email: address, password: PASSWORD }));
    expect(up.result.status).toBe(200);
    expect(up.statements, show(up.statements)).toHaveLength(1);
    expect(up.statements[0]!.sql).toMatch(/^WITH u AS \(\s*INSERT INTO users /);
    const rows = await admin("select (select count(*) from accounts a where a.user_id = u.id and a.provider_id = 'credential') as accounts, (select count(*) from sessions s where s.user_id = u.id) as sessions from users u where u.email = $1", [address]);
    expect(rows.rows[0]).toEqual({ accounts: "1", sessions: "1" });
    const taken = await statementsOf(() => postJson(`${server.auth}/sign-up/email`, { name: "Again", email: address, password: PASSWORD }));
    expect(taken.result.status).toBe(409);
    expect(taken.statements, show(taken.statements)).toHaveLength(1);
    console.log(`[statements] sign-up/email ${up.statements.length}`);
  });

  it("a wrong password costs the lookup and its audit record; a banned user the same (the ban is on the row it read)", async () => {
    const user = await signUp();
    const wrong = await statementsOf(() => postJson(`${server.auth}/sign-in/email`, { email: user.email, password: "not-the-password" }));
    expect(wrong.result.status).toBe(401);
    expect(wrong.statements, show(wrong.statements)).toHaveLength(2);
    expect(wrong.statements[1]!.sql).toMatch(/^INSERT INTO audit_events /);

    await admin("update users set banned = true where id = $1", [user.id]);
    const banned = await statementsOf(() => postJson(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }));
    expect(banned.result.body.code).toBe("BANNED_USER");
    expect(banned.statements, show(banned.statements)).toHaveLength(2);
    expect(banned.statements[1]!.sql).toMatch(/^INSERT INTO audit_events /);
  });

  /** Holds the user row FOR UPDATE (as a ban or a removal does) until the sign-in's insert waits on it, then runs `change` and commits. */
  async function whileSignInWaits(user: { id: string; email: string }, change: string) {
    const lock = new pg.Client({ connectionString: db.url });
    // Another session watches: statistics views keep one snapshot per transaction.
    const watch = new pg.Client({ connectionString: db.url });
    await Promise.all([lock.connect(), watch.connect()]);
    try {
      await lock.query("begin");
      await lock.query("select id from users where id = $1 for update", [user.id]);
      const signingIn = postJson(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD });
      // The insert is blocked on the row lock (after the ~20 ms argon2 verify): wait until PostgreSQL says so.
      for (let waited = 0; ; waited += 20) {
        const { rows } = await watch.query("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock' and query like 'INSERT INTO sessions%'");
        if (rows[0].n === 1) break;
        if (waited > 20_000) throw new Error("the sign-in's insert never waited on the row lock");
        await new Promise((r) => setTimeout(r, 20));
      }
      await lock.query(change, [user.id]);
      await lock.query("commit");
      return await signingIn;
    } finally {
      await Promise.all([lock.end(), watch.end()]);
    }
  }

  it("a ban in progress (row held FOR UPDATE): the insert waits for it, then refuses with 403 BANNED_USER and writes nothing", async () => {
    const user = await signUp();
    const signedIn = await whileSignInWaits(user, "update users set banned = true, ban_reason = 'held' where id = $1");
    expect(signedIn.status).toBe(403);
    expect(signedIn.body.code).toBe("BANNED_USER");
    expect((await admin("select count(*)::int as n from sessions where user_id = $1", [user.id])).rows[0].n).toBe(1); // the sign-up's
  });

  it("a removal in progress: the insert waits for it, then answers 401 like an unknown user", async () => {
    const user = await signUp();
    const signedIn = await whileSignInWaits(user, "delete from users where id = $1");
    expect(signedIn.status).toBe(401);
    expect(signedIn.body.code).toBe("INVALID_EMAIL_OR_PASSWORD");
    expect((await admin("select count(*)::int as n from sessions where user_id = $1", [user.id])).rows[0].n).toBe(0);
  });
});
