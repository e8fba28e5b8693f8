import Database from "better-sqlite3";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { createPortcullis, type Portcullis, type PortcullisConfig } from "../../../src/index.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * docs/wire-contract.md §8, `rateLimit.storage: "database"`: the counts live in the `rate_limits` table,
 * so several instances on one database share them. Counting is wall-clock (rate-limiter-flexible
 * reads Date.now), so each test stays inside one window and uses its own client IPs.
 */

const PASSWORD = "password123";
const DB_LIMITS: PortcullisConfig = { rateLimit: { enabled: true, storage: "database" }, trustProxy: true };
let ipCounter = 0;
const nextIp = () => `198.51.100.${++ipCounter}`;
const from = (ip: string) => ({ "x-forwarded-for": ip });

const servers: TestServer[] = [];
const peers: Portcullis[] = [];
afterEach(async () => {
  await Promise.all(peers.splice(0).map((p) => p.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(config: PortcullisConfig = DB_LIMITS, logger?: ReturnType<typeof captureLog>) {
  const s = await startTestServer(config, logger ? { logger: logger.logger } : {});
  servers.push(s);
  return s;
}

/** A second instance on the first one's database (same config), listening on its own port. */
async function peerOf(server: TestServer, config: PortcullisConfig = DB_LIMITS): Promise<{ auth: string; url: string; portcullis: Portcullis }> {
  const portcullis = await createPortcullis({
    databaseUrl: server.db.url,
    secret: "test-secret-test-secret-test-secret-0123",
    logLevel: "silent",
    clock: server.clock,
    ...config,
  });
  peers.push(portcullis);
  const url = await portcullis.listen(0, "127.0.0.1");
  return { url, auth: `${url}/api/auth`, portcullis };
}

/** Runs SQL on the test database with a connection of its own. */
async function sql(server: TestServer, text: string): Promise<Record<string, unknown>[]> {
  if (testDialect === "sqlite") {
    const db = new Database(server.db.url.slice("sqlite:".length));
    try {
      const stmt = db.prepare(text);
      return stmt.reader ? (stmt.all() as Record<string, unknown>[]) : (stmt.run(), []);
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: server.db.url });
  await client.connect();
  try {
    return (await client.query(text)).rows;
  } finally {
    await client.end();
  }
}

function expectRateLimited(res: Reply, windowSec: number) {
  expect(res.status, res.text).toBe(429);
  expect(res.body).toEqual({ code: "RATE_LIMITED", message: expect.any(String) });
  const retry = Number(res.headers.get("retry-after"));
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(windowSec);
  expect(res.headers.get("x-retry-after")).toBe(res.headers.get("retry-after"));
}

describe(`rate limits in the database (${testDialect})`, () => {
  it("two instances on one database share the count: the 4th sign-in from one IP across both is 429", async () => {
    const a = await start();
    const b = await peerOf(a);
    expect(a.portcullis.app.rateLimiter.storage).toBe("database");
    const email = uniqueEmail("shared");
    expect((await post(`${a.auth}/sign-up/email`, { name: "S", email, password: PASSWORD }, { headers: from(nextIp()) })).status).toBe(200);

    const ip = nextIp();
    const signIn = (auth: string, password = PASSWORD) => post(`${auth}/sign-in/email`, { email, password }, { headers: from(ip) });
    expect((await signIn(a.auth)).status).toBe(200);
    expect((await signIn(b.auth, "wrong-password")).status).toBe(401);
    expect((await signIn(a.auth)).status).toBe(200);
    const fourth = await signIn(b.auth);
    expectRateLimited(fourth, 10);
    expect(fourth.headers.get("set-auth-token")).toBeNull();
    // and the first instance sees the same exhausted counter
    expectRateLimited(await signIn(a.auth), 10);
    // another client is not affected, on either instance
    expect((await post(`${b.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(nextIp()) })).status).toBe(200);

    // the counter is a row of rate_limits: rule prefix, client IP and path
    const rows = await sql(a, `select key, points, expire from rate_limits where key like '%${ip}%'`);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.key).toBe(`/sign-in/*:${ip}|/sign-in/email`);
    expect(Number(rows[0]!.points)).toBe(5);
    expect(Number(rows[0]!.expire)).toBeGreaterThan(Date.now());
  });

  it("concurrent sign-ins spread over two instances: exactly 3 get through", async () => {
    const a = await start();
    const b = await peerOf(a);
    const ip = nextIp();
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post(`${i % 2 ? a.auth : b.auth}/sign-in/email`, { email: uniqueEmail("nobody"), password: PASSWORD }, { headers: from(ip) }),
      ),
    );
    const statuses = replies.map((r) => r.status);
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
  });

  it("operator rules and the default window apply to the database store, and tRPC shares the REST counter", async () => {
    const config: PortcullisConfig = { ...DB_LIMITS, rateLimit: { enabled: true, storage: "database", max: 3, rules: { "/get-session": { window: 10, max: 2 } } } };
    const a = await start(config);
    const b = await peerOf(a, config);
    const ip = nextIp();
    expect((await get(`${a.auth}/get-session`, { headers: from(ip) })).status).toBe(200);
    expect((await get(`${b.url}/api/trpc/getSession`, { headers: from(ip) })).status).toBe(200);
    expectRateLimited(await get(`${a.auth}/get-session`, { headers: from(ip) }), 10);
    // default rule (max 3 per 10 s) on /list-sessions (401 without a session: counted all the same)
    for (let i = 0; i < 3; i++) expect((await get(`${i % 2 ? a.auth : b.auth}/list-sessions`, { headers: from(ip) })).status).toBe(401);
    expectRateLimited(await get(`${b.auth}/list-sessions`, { headers: from(ip) }), 10);
  });

  it("a key too long for the key column (unknown tRPC path, long forwarded IP) is stored as a digest", async () => {
    const a = await start();
    const long = `p${"x".repeat(400)}`;
    const res = await get(`${a.url}/api/trpc/${long}`, { headers: from(`${"1".repeat(300)}`) });
    expect(res.status, res.text).toBe(404);
    const rows = await sql(a, `select key from rate_limits where key like '*:#%'`);
    expect(rows).toHaveLength(1);
    expect(String(rows[0]!.key)).toMatch(/^\*:#[0-9a-f]{64}$/);
  });

  it("when the store fails, limits fall back to per-instance memory counts and the failure is logged once", async () => {
    const log = captureLog("error");
    const a = await start(DB_LIMITS, log);
    const email = uniqueEmail("outage");
    expect((await post(`${a.auth}/sign-up/email`, { name: "O", email, password: PASSWORD }, { headers: from(nextIp()) })).status).toBe(200);
    await sql(a, "drop table rate_limits");

    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await post(`${a.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(ip) });
      statuses.push(res.status);
      if (res.status === 429) expectRateLimited(res, 10);
    }
    // not refused (no 5xx), not unlimited: the rule still holds, counted in this process
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const failures = log.lines().filter((l) => l.msg === "rate limit store failed: counting in memory on this instance");
    expect(failures).toHaveLength(1);
    expect(failures[0]!.level).toBe(50);
    expect(failures[0]!.err).toBeDefined();
  });
});
