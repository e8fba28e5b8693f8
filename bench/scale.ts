/**
 * "Data at scale": Portcullis on a PostgreSQL database of 1M users (each with
 * a credential account) and 5M sessions, seeded by the database itself (bench/scale/seed.ts).
 *
 *   get-session     the session store's prepared lookup (findByTokenHash) in process, and
 *                   GET /api/auth/get-session over HTTP with the session cache off (every
 *                   check a database lookup), random seeded sessions
 *   list-users      GET /api/auth/admin/list-users over HTTP with a real admin session: first
 *                   page, deep pages, email and name contains-searches, sorts; the first call of
 *                   each (cold: the total is counted) apart from the following ones
 *   sweeper         1M expired sessions removed by sweepOnce() at the configured batch size
 *                   (500) and at 5,000, with get-session latency measured meanwhile
 *
 * and EXPLAIN (ANALYZE, BUFFERS) of every statement those list-users calls and the session lookup
 * ran (captured as the service sent them). The service runs in this process, on the real code
 * (createPortcullis, the bridge, the admin router, the sweeper).
 *
 *   npx tsx bench/scale.ts            # prints the table; `runScale()` returns its rows
 *
 * Environment: SCALE_USERS (1000000), SCALE_SESSIONS (5000000), SCALE_EXPIRED (1000000; 0 skips
 * the sweeper), SCALE_SAMPLES (list-users calls per scenario, 200), SCALE_SESSION_SAMPLES (5000),
 * SCALE_PG_URL (an existing database to connect to for CREATE DATABASE, default
 * postgres://postgres@127.0.0.1:5432/test), SCALE_DB (portcullis_scale, dropped and created),
 * SCALE_KEEP=1 keeps the database afterwards; SCALE_REUSE=1 runs on a database so kept (same
 * sizes) without seeding again, and keeps it.
 */
import { fork, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath, pathToFileURL } from "node:url";
import pg from "pg";
import { sha256 } from "../src/crypto/tokens.ts";
import { migrateUp, openOrm } from "../src/db/orm.ts";
import { createPortcullis, type Portcullis, type PortcullisConfig } from "../src/index.ts";
import { createAdmin } from "../src/modules/admin/bootstrap.service.ts";
import { closeClient, getJson, latency, prng, sample, timed, type Latency } from "./scale/measure.ts";
import { explain, formatPlans, type PlanSummary } from "./scale/plans.ts";
import { seed, seedExpiredSessions, seededEmail, seededToken } from "./scale/seed.ts";

export interface ScaleOptions {
  users?: number;
  sessions?: number;
  /** Expired sessions the sweeper removes (0: no sweeper scenario). */
  expired?: number;
  samples?: number;
  sessionSamples?: number;
  /** A database on the server to connect to for CREATE / DROP DATABASE. */
  adminUrl?: string;
  database?: string;
  keep?: boolean;
  /** Use the database as a kept earlier run left it (same sizes), skipping the seed; implies keep. */
  reuse?: boolean;
  log?: (line: string) => void;
}

/** A figure of the performance targets (docs/performance.md). `higher`: the value must reach the target; otherwise stay at or below it. */
export interface ScaleRow {
  name: string;
  value: number;
  unit: string;
  target: number | null;
  higher?: boolean;
}

const envNumber = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`);
  return v;
};

const GET_SESSION_P99_MS = 2;
const LIST_USERS_MS = 50;
const LIST_MEMBERS_P50_MS = 10;
const EXPIRED_PER_HOUR = 1_000_000;
const ADMIN = { email: "scale-admin@bench.test", password: "scale admin password", name: "Scale Admin" };

/** The database URL of `database` on the server of `adminUrl`. */
function databaseUrl(adminUrl: string, database: string): string {
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/**
 * Named statements the service prepares (the session store's lookup), recorded as pg sees them:
 * the bench EXPLAINs the query the store really sends.
 */
function recordNamedStatements(): { named: Map<string, string>; restore(): void } {
  const named = new Map<string, string>();
  const proto = pg.Client.prototype as unknown as { query: (...args: unknown[]) => unknown };
  const original = proto.query;
  proto.query = function (this: unknown, ...args: unknown[]) {
    const config = args[0] as { name?: unknown; text?: unknown } | null;
    if (config && typeof config === "object" && typeof config.name === "string" && typeof config.text === "string") named.set(config.name, config.text);
    return original.apply(this, args);
  };
  return { named, restore: () => void (proto.query = original) };
}

/** bench/scale/serve.ts in a child process: the service the HTTP figures are measured against. */
async function startServiceChild(config: PortcullisConfig): Promise<{ url: string; bareUrl: string; stop(): Promise<void> }> {
  const child: ChildProcess = fork(join(dirname(fileURLToPath(import.meta.url)), "scale", "serve.ts"), [], {
    execArgv: ["--import", "tsx"],
    env: { ...process.env, SCALE_SERVICE_CONFIG: JSON.stringify(config) },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
  const exited = once(child, "exit");
  const [line] = (await Promise.race([once(createInterface({ input: child.stdout! }), "line"), exited.then(() => { throw new Error("the service child exited before it listened"); })])) as [string];
  const { url, bareUrl } = JSON.parse(line) as { url: string; bareUrl: string };
  return {
    url,
    bareUrl,
    async stop() {
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** SQL statements the ORM runs while `fn` runs, parameters inlined (what PostgreSQL receives). */
async function captureSql<T>(p: Portcullis, fn: () => Promise<T>): Promise<{ result: T; statements: string[] }> {
  const { orm } = p.app;
  const statements: string[] = [];
  orm.config.set("onQuery", (sql: string, params: unknown[]) => (statements.push(orm.em.getPlatform().formatQuery(sql, params as never[])), sql));
  try {
    return { result: await fn(), statements };
  } finally {
    orm.config.set("onQuery", (sql: string) => sql);
  }
}

function statementLabel(sql: string): string {
  if (/^select count/i.test(sql)) return "count";
  if (/^select "u"\."id"/.test(sql)) return "page ids";
  if (/"id" in \(/.test(sql)) return "users by id";
  if (/^select/.test(sql)) return "page";
  return sql.slice(0, 40);
}

/** A database a kept run left: at least the seeded users (the admin is one more) and sessions. */
async function seededAlready(adminUrl: string, url: string, users: number, sessions: number): Promise<boolean> {
  const name = new URL(url).pathname.slice(1);
  const exists = await withClient(adminUrl, async (c) => (await c.query("select 1 from pg_database where datname = $1", [name])).rowCount === 1);
  if (!exists) return false;
  return withClient(url, async (c) => {
    const counted = await c.query("select (select count(*) from users) as users, (select count(*) from sessions) as sessions").catch(() => null);
    const row = counted?.rows[0] as { users: string; sessions: string } | undefined;
    return row !== undefined && Number(row.users) >= users && Number(row.sessions) >= sessions;
  });
}

export async function runScale(options: ScaleOptions = {}): Promise<ScaleRow[]> {
  const users = options.users ?? 1_000_000;
  const sessions = options.sessions ?? 5_000_000;
  const expired = options.expired ?? 1_000_000;
  const samples = Math.max(1, options.samples ?? 200);
  const sessionSamples = Math.max(1, options.sessionSamples ?? 5000);
  const adminUrl = options.adminUrl ?? "postgres://postgres@127.0.0.1:5432/test";
  const database = options.database ?? "portcullis_scale";
  const log = options.log ?? ((line: string) => console.log(line));
  if (!/^[a-z_][a-z0-9_]*$/.test(database)) throw new Error(`database name ${database}: lower-case letters, digits and _ only`);
  const url = databaseUrl(adminUrl, database);
  const rows: ScaleRow[] = [];
  const plans: PlanSummary[] = [];
  const row = (name: string, value: number, unit: string, target: number | null, higher = false) => rows.push({ name, value, unit, target, higher });

  log(`scale: database ${database}, ${users.toLocaleString("en")} users, ${sessions.toLocaleString("en")} sessions`);
  const keep = options.keep || options.reuse;
  const reuse = options.reuse === true && (await seededAlready(adminUrl, url, users, sessions));
  if (options.reuse && !reuse) log("scale: nothing to reuse (no database of these sizes): seeding");
  if (!reuse) {
    await withClient(adminUrl, async (c) => {
      await c.query(`drop database if exists ${database} with (force)`);
      await c.query(`create database ${database}`);
    });
  }
  const recorder = recordNamedStatements();
  let service: Portcullis | undefined;
  let child: { url: string; bareUrl: string; stop(): Promise<void> } | undefined;
  try {
    const orm = await openOrm({ dialect: "postgresql", location: url });
    await migrateUp(orm);
    await orm.close();
    if (!reuse) {
      const seeded = await withClient(url, (c) => seed(c, { users, sessions, log }));
      row("seed (users, accounts, sessions, VACUUM ANALYZE)", seeded.seconds, "s", null);
    } else {
      // As the seed leaves it: the last run's sweeper left a million dead session rows behind.
      await withClient(url, (c) => c.query("vacuum analyze"));
    }

    const config: PortcullisConfig = {
      databaseUrl: url,
      secret: "scale-bench-secret-scale-bench-secret-0123",
      logLevel: "silent",
      rateLimit: { enabled: false },
      sweeper: { intervalSec: 0 },
      // Every get-session a database lookup: the figure this scenario is about.
      session: { cacheTtlMs: 0 },
    };
    // In this process: the store lookup, the statements list-users sends (for EXPLAIN), the sweeper.
    service = await createPortcullis(config);
    const p = service;
    child = await startServiceChild(config);
    const auth = `${child.url}${p.app.config.basePath}`;

    // ---- get-session
    // A serving database keeps its lookup's pages in memory; right after the seed (or a reuse)
    // most of them are on disk, and 5,000 random lookups would measure the disk instead.
    const warmed = await withClient(url, async (c) => {
      try {
        await c.query("create extension if not exists pg_prewarm");
        const relations = ["sessions", "sessions_token_hash_unique", "users", "users_pkey"];
        for (const rel of relations) await c.query("select pg_prewarm($1, 'read')", [rel]);
        return relations.join(", ");
      } catch (err) {
        return `not prewarmed (${(err as Error).message})`;
      }
    });
    log(`  get-session: lookup relations read into the OS cache first: ${warmed}`);
    const pick = prng(14);
    const randomToken = () => seededToken(1 + Math.floor(pick() * sessions));
    const storeLatency = await sample(sessionSamples, 200, async () => {
      const found = await p.app.sessions.findByTokenHash(sha256(randomToken()));
      if (!found) throw new Error("a seeded session was not found");
    });
    row("get-session: session store lookup (in process) p50", storeLatency.p50, "ms", null);
    row("get-session: session store lookup (in process) p99", storeLatency.p99, "ms", GET_SESSION_P99_MS);
    const getSession = async () => {
      const res = await getJson<{ session?: unknown } | null>(`${auth}/get-session`, { authorization: `Bearer ${randomToken()}` });
      if (res.status !== 200 || !res.body?.session) throw new Error(`get-session answered ${res.status}`);
    };
    // Alternating with the bare server's fixed answer: both under the same machine at the same moment.
    const bareUrl = child.bareUrl;
    const bare = async () => void (await getJson(bareUrl));
    const sessionMs: number[] = [];
    const bareMs: number[] = [];
    for (let i = 0; i < 200; i++) {
      await getSession();
      await bare();
    }
    for (let i = 0; i < sessionSamples; i++) {
      sessionMs.push((await timed(getSession)).ms);
      bareMs.push((await timed(bare)).ms);
    }
    const httpLatency = latency(sessionMs);
    const bareLatency = latency(bareMs);
    row("get-session over HTTP, cache off p50", httpLatency.p50, "ms", null);
    row("get-session over HTTP, cache off p99", httpLatency.p99, "ms", GET_SESSION_P99_MS);
    row("baseline: bare node:http beside it, fixed JSON p50", bareLatency.p50, "ms", null);
    row("baseline: bare node:http beside it, fixed JSON p99", bareLatency.p99, "ms", null);
    const lookup = [...recorder.named.values()].find((text) => /from sessions/i.test(text) && /token_hash = \$1/i.test(text));
    if (lookup) await withClient(url, async (c) => plans.push(await explain(c, "get-session lookup", lookup, [sha256(randomToken())])));

    // ---- list-users
    const adminExists = await withClient(url, async (c) => (await c.query("select 1 from users where email = $1", [ADMIN.email])).rowCount === 1);
    if (!adminExists) await createAdmin(p.app.orm.em.fork(), p.app.config, ADMIN);
    const signIn = await fetch(`${auth}/sign-in/email`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email: ADMIN.email, password: ADMIN.password }) });
    const { token } = (await signIn.json()) as { token?: string };
    if (signIn.status !== 200 || !token) throw new Error(`admin sign-in answered ${signIn.status}`);
    const listUsers = async (query: Record<string, string | number>) => {
      const qs = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
      const { status, body } = await getJson<{ users?: unknown[]; total?: number }>(`${auth}/admin/list-users?${qs}`, { authorization: `Bearer ${token}` });
      if (status !== 200 || !Array.isArray(body.users)) throw new Error(`list-users ${qs} answered ${status}`);
      return body as { users: { email: string }[]; total: number };
    };
    const asAdmin = p.createCaller({ headers: { authorization: `Bearer ${token}` } });
    const deep = Math.floor((users * 0.9) / 100) * 100;
    const middle = Math.floor(users / 200) * 100;
    const someone = Math.max(1, Math.floor(users * 0.777));
    const scenarios: [string, Record<string, string | number>][] = [
      ["first page", { limit: 100 }],
      [`deep page (offset ${deep.toLocaleString("en")})`, { limit: 100, offset: deep }],
      [`middle page (offset ${middle.toLocaleString("en")})`, { limit: 100, offset: middle }],
      ["email contains, one user", { searchField: "email", searchOperator: "contains", searchValue: seededEmail(someone).split("@")[0]!, limit: 100 }],
      ["email contains 'lovelace' (4%)", { searchField: "email", searchOperator: "contains", searchValue: "lovelace", limit: 100 }],
      ["name contains 'grace hop' (0.2%)", { searchField: "name", searchOperator: "contains", searchValue: "grace hop", limit: 100 }],
      ["sort by name desc", { sortBy: "name", sortDirection: "desc", limit: 100 }],
      ["sort by email desc", { sortBy: "email", sortDirection: "desc", limit: 100 }],
    ];
    for (const [name, query] of scenarios) {
      const cold = await timed(() => listUsers(query));
      const l: Latency = await sample(samples, 2, () => listUsers(query));
      row(`list-users ${name}: first call`, cold.ms, "ms", LIST_USERS_MS);
      row(`list-users ${name} p50`, l.p50, "ms", LIST_USERS_MS);
      row(`list-users ${name} p99`, l.p99, "ms", LIST_USERS_MS);
      log(`  ${name}: total ${cold.result.total.toLocaleString("en")}, ${cold.result.users.length} users on the page`);
      // The same two calls in this process (its own total cache), their statements EXPLAINed.
      const first = await captureSql(p, () => asAdmin.admin.listUsers(query as never));
      const later = await captureSql(p, () => asAdmin.admin.listUsers(query as never));
      await withClient(url, async (c) => {
        for (const sql of first.statements) plans.push(await explain(c, `${name}, first call: ${statementLabel(sql)}`, sql));
        for (const sql of later.statements.filter((s) => !first.statements.includes(s))) plans.push(await explain(c, `${name}, later calls: ${statementLabel(sql)}`, sql));
      });
    }

    // ---- list-members: one organization of up to 100k seeded users, the admin its owner
    const orgMembers = Math.min(users, 100_000);
    const adminId = await withClient(url, async (c) => (await c.query<{ id: string }>("select id from users where email = $1", [ADMIN.email])).rows[0]!.id);
    const orgId = "00000000-0000-4000-8000-00000000a11c";
    await withClient(url, async (c) => {
      const { ms: seeded } = await timed(async () => {
        await c.query(`insert into organizations (id, name, slug, created_at) values ($1, 'Scale Org', 'scale-org', now()) on conflict do nothing`, [orgId]);
        await c.query(`insert into members (id, organization_id, user_id, role, created_at) values (md5('member-owner')::uuid, $1, $2, 'owner', now()) on conflict do nothing`, [orgId, adminId]);
        await c.query(
          `insert into members (id, organization_id, user_id, role, created_at)
           select md5('member-' || i)::uuid, $1, md5('user-' || i)::uuid, case when i % 100 = 0 then 'admin' else 'member' end,
                  timestamptz '2020-01-01' + i * interval '1 second'
           from generate_series(1, $2::int) i on conflict do nothing`,
          [orgId, orgMembers],
        );
        await c.query("vacuum analyze members");
      });
      log(`  list-members: ${orgMembers.toLocaleString("en")} members seeded in ${(seeded / 1000).toFixed(1)} s`);
    });
    const listMembers = async (query: Record<string, string | number>) => {
      const qs = new URLSearchParams(Object.entries({ organizationId: orgId, ...query }).map(([k, v]): [string, string] => [k, String(v)]));
      const { status, body } = await getJson<{ members?: unknown[]; total?: number }>(`${auth}/organization/list-members?${qs}`, { authorization: `Bearer ${token}` });
      if (status !== 200 || !Array.isArray(body.members)) throw new Error(`list-members ${qs} answered ${status}`);
      return body as { members: unknown[]; total: number };
    };
    const memberScenarios: [string, Record<string, string | number>][] = [
      ["first page", { limit: 100 }],
      [`deep page (offset ${Math.floor(orgMembers * 0.9).toLocaleString("en")})`, { limit: 100, offset: Math.floor(orgMembers * 0.9) }],
      ["role = admin (1%)", { filterField: "role", filterValue: "admin", limit: 100 }],
      ["sort by role desc", { sortBy: "role", sortDirection: "desc", limit: 100 }],
    ];
    for (const [name, query] of memberScenarios) {
      const l: Latency = await sample(samples, 5, () => listMembers(query));
      row(`list-members (${orgMembers.toLocaleString("en")}) ${name} p50`, l.p50, "ms", LIST_MEMBERS_P50_MS);
      row(`list-members (${orgMembers.toLocaleString("en")}) ${name} p99`, l.p99, "ms", null);
      const captured = await captureSql(p, () => asAdmin.organization.listMembers({ organizationId: orgId, ...query } as never));
      await withClient(url, async (c) => {
        for (const sql of captured.statements) plans.push(await explain(c, `list-members ${name}: ${statementLabel(sql)}`, sql));
      });
    }

    // ---- sweeper
    if (expired > 0) {
      for (const batchSize of [p.app.config.sweeper.batchSize, 5000]) {
        await withClient(url, (c) => seedExpiredSessions(c, expired, users, log));
        const sweeping = await createPortcullis({ ...config, sweeper: { intervalSec: 0, batchSize } });
        try {
          const served: number[] = [];
          let done = false;
          const during = (async () => {
            while (!done) served.push((await timed(getSession)).ms);
          })();
          let statements = 0;
          sweeping.app.orm.config.set("onQuery", (sql: string) => (sql.startsWith("delete from") && statements++, sql));
          const started = performance.now();
          const first = (await sweeping.sweeper.sweepOnce()).sessions;
          let removed = first;
          for (let n = first; n > 0; removed += n) n = (await sweeping.sweeper.sweepOnce()).sessions;
          const seconds = (performance.now() - started) / 1000;
          done = true;
          await during;
          const meanwhile = latency(served);
          // One sweep that empties the backlog only shows a lower bound of what a sweep can do.
          const bound = first === expired ? " (lower bound: one sweep emptied the backlog)" : "";
          row(`sweeper (batch ${batchSize}): expired sessions removed per second`, removed / seconds, "rows/s", null);
          row(`sweeper (batch ${batchSize}): removed by the first sweep of ${expired.toLocaleString("en")}`, first, "rows", null);
          row(`sweeper (batch ${batchSize}): per hour at the 300 s interval${bound}`, first * 12, "rows/h", EXPIRED_PER_HOUR, true);
          row(`sweeper (batch ${batchSize}): mean ms per delete statement (every swept table)`, (seconds * 1000) / statements, "ms", null);
          row(`sweeper (batch ${batchSize}): get-session over HTTP p99 meanwhile`, meanwhile.p99, "ms", null);
          log(`  sweeper batch ${batchSize}: ${removed.toLocaleString("en")} rows in ${seconds.toFixed(1)} s, ${statements} statements`);
          if (removed !== expired) throw new Error(`the sweeper removed ${removed} of ${expired} expired sessions`);
        } finally {
          await sweeping.close();
        }
      }
      const live = await withClient(url, async (c) => Number((await c.query("select count(*) from sessions")).rows[0].count));
      if (live < sessions) throw new Error(`live sessions lost: ${live} of ${sessions} left`);
    }
    log(`\nEXPLAIN (ANALYZE, BUFFERS):\n${formatPlans(plans)}`);
  } finally {
    recorder.restore();
    await closeClient();
    await child?.stop();
    await service?.close();
    if (!keep) await withClient(adminUrl, (c) => c.query(`drop database if exists ${database} with (force)`));
  }
  return rows;
}

export function formatScaleRows(rows: ScaleRow[]): string {
  const cells = rows.map((r) => {
    const digits = r.value >= 100 ? 0 : r.value >= 10 ? 1 : 2;
    const met = r.target === null ? "" : (r.higher ? r.value >= r.target : r.value <= r.target) ? "MET" : "MISSED";
    return [r.name, r.value.toLocaleString("en", { maximumFractionDigits: digits }), r.unit, r.target === null ? "" : `${r.higher ? ">=" : "<"} ${r.target.toLocaleString("en")}`, met];
  });
  const header = ["measurement", "value", "unit", "target", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 1 ? v.padStart(widths[i]!) : v.padEnd(widths[i]!))).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...cells.map(line)].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const rows = await runScale({
    users: envNumber("SCALE_USERS", 1_000_000),
    sessions: envNumber("SCALE_SESSIONS", 5_000_000),
    expired: envNumber("SCALE_EXPIRED", 1_000_000),
    samples: envNumber("SCALE_SAMPLES", 200),
    sessionSamples: envNumber("SCALE_SESSION_SAMPLES", 5000),
    adminUrl: process.env.SCALE_PG_URL,
    database: process.env.SCALE_DB,
    keep: process.env.SCALE_KEEP === "1",
    reuse: process.env.SCALE_REUSE === "1",
  });
  console.log(`\n${formatScaleRows(rows)}`);
}
