import { createHash } from "node:crypto";
import { request as httpRequest } from "node:http";
import Database from "better-sqlite3";
import fc from "fast-check";
import pg from "pg";
import { afterAll, beforeAll, expect } from "vitest";
import { createAdmin } from "../../../src/modules/admin/bootstrap.service.ts";
import { testDialect } from "../../harness/database.ts";
import { TEST_ORIGIN } from "../../harness/http.ts";
import { captureLog, type CapturedLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { ACTOR_PASSWORD, VICTIM_PASSWORD, type AuthKind, type Case, type Seed } from "./generators.ts";

/**
 * Hostile input, property-based: generated bodies, queries, headers and paths go
 * to EVERY route of the bridge's table (rest-bridge/routes.ts) and to /api/trpc/<EVERY
 * procedure> of the router, so a route added later is fuzzed without editing these files.
 *
 * Every answer must be a 2xx/3xx, or a 4xx with the contract's error body (`{ code, message }`;
 * RFC 6749 `{ error, error_description }` from the device endpoints; tRPC's envelope with
 * `data.authCode` on /api/trpc). Never a 5xx, never a hang (each request has a deadline), and a
 * rejected (4xx) request leaves the database as it was: a digest of every table is compared
 * before and after it. Things left out of the digest, all by design: the
 * `rate_limits` table (every request, accepted or not, is counted),
 * `device_codes.last_polled_at` (a rejected poll records its time: slow_down is computed from it),
 * the counters of wrong second-factor codes and the tries spent on mailed codes (`email_otps.attempts`), and the audit trail's `sign-in-failed` records (a
 * refused sign-in is recorded: docs/operations.md "Audit").
 *
 * FUZZ_RUNS scales the number of cases (default 1).
 */

const SCALE = Number(process.env.FUZZ_RUNS ?? 1);
export const runs = (n: number) => Math.max(1, Math.round(n * SCALE));
const REQUEST_DEADLINE_MS = 10_000;

// --- the harness -------------------------------------------------------------------------

export interface Digester {
  digest(): Promise<string>;
  counts(): Promise<Record<string, number>>;
  close(): Promise<void>;
}

/**
 * RFC 6749 §5.2 / RFC 8628 §3.5 error codes: the device endpoints (code, token, approve, deny) answer
 * `{ error, error_description }`; approve and deny without a session say `unauthorized`, as
 * better-auth's device plugin does.
 */
const OAUTH_ERRORS = new Set([
  "invalid_request",
  "invalid_client",
  "invalid_grant",
  "unauthorized_client",
  "unsupported_grant_type",
  "invalid_scope",
  "authorization_pending",
  "slow_down",
  "access_denied",
  "expired_token",
  "unauthorized",
  // RFC 6750 §3.1 (the OpenID provider's userinfo)
  "invalid_token",
  "insufficient_scope",
  // RFC 7591 §3.2.2 (dynamic registration)
  "invalid_redirect_uri",
  "invalid_client_metadata",
]);

const DIGEST_SKIP_TABLES = new Set(["rate_limits", "mikro_orm_migrations"]);
/**
 * Columns a refused request writes on purpose: a device poll's time (RFC 8628 slow_down), and the
 * counters of wrong second-factor and mailed codes (the count is the brute-force defence: a wrong
 * code is refused and counted; an email code's try is spent before the comparison). Every other
 * column of every table must stay as it was.
 */
const DIGEST_SKIP_COLUMNS: Record<string, Set<string>> = {
  device_codes: new Set(["last_polled_at"]),
  email_otps: new Set(["attempts"]),
  two_factor_challenges: new Set(["attempts"]),
  two_factors: new Set(["failed_count", "locked_until"]),
};

/** Rows a refused request writes on purpose: the audit record of a refused sign-in (core/sign-in-audit.ts). */
const DIGEST_SKIP_ROWS: Record<string, string> = {
  audit_events: `where action <> 'sign-in-failed'`,
};

/** Rows in a stable order, whatever order the database returns them in. */
function rowsText(rows: unknown[][]): string {
  return rows
    .map((r) => JSON.stringify(r))
    .sort()
    .join("\n");
}

async function openDigester(server: TestServer): Promise<Digester> {
  if (testDialect === "sqlite") {
    const db = new Database(server.db.url.slice("sqlite:".length), { readonly: true });
    const tables = () =>
      (db.prepare(`select name from sqlite_master where type = 'table' and name not like 'sqlite_%'`).all() as { name: string }[])
        .map((r) => r.name)
        .filter((t) => !DIGEST_SKIP_TABLES.has(t))
        .sort();
    const columns = (t: string) =>
      (db.prepare(`pragma table_info("${t}")`).all() as { name: string }[]).map((c) => c.name).filter((c) => !DIGEST_SKIP_COLUMNS[t]?.has(c));
    return {
      async digest() {
        const h = createHash("sha256");
        for (const t of tables()) {
          const cols = columns(t).map((c) => `"${c}"`).join(", ");
          h.update(`${t}\n${rowsText(db.prepare(`select ${cols} from "${t}" ${DIGEST_SKIP_ROWS[t] ?? ""}`).raw().all() as unknown[][])}`);
        }
        return h.digest("hex");
      },
      async counts() {
        return Object.fromEntries(tables().map((t) => [t, (db.prepare(`select count(*) as n from "${t}"`).get() as { n: number }).n]));
      },
      async close() {
        db.close();
      },
    };
  }
  const client = new pg.Client({ connectionString: server.db.url });
  await client.connect();
  const tables = async () =>
    (await client.query(`select table_name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`)).rows
      .map((r) => r.table_name as string)
      .filter((t) => !DIGEST_SKIP_TABLES.has(t))
      .sort();
  const columns = async (t: string) =>
    (await client.query(`select column_name from information_schema.columns where table_schema = 'public' and table_name = $1 order by ordinal_position`, [t])).rows
      .map((r) => r.column_name as string)
      .filter((c) => !DIGEST_SKIP_COLUMNS[t]?.has(c));
  /**
   * One statement for the whole digest: each table's rows as text, sorted and hashed by the
   * server (one round trip per digest instead of one per table; the fuzz files digest twice per
   * refused case), prepared once. Built on first use: the schema does not change during a run.
   */
  let digestSql: string | undefined;
  return {
    async digest() {
      if (!digestSql) {
        const parts = [];
        for (const t of await tables()) {
          const cols = (await columns(t)).map((c) => `"${c}"`).join(", ");
          parts.push(`select '${t}' as t, md5(coalesce(string_agg(r::text, E'\\n' order by r::text), '')) as d from (select ${cols} from "${t}" ${DIGEST_SKIP_ROWS[t] ?? ""}) r`);
        }
        digestSql = parts.join("\nunion all\n");
      }
      const h = createHash("sha256");
      for (const row of (await client.query<{ t: string; d: string }>({ name: "fuzz-digest", text: digestSql })).rows.sort((a, b) => a.t.localeCompare(b.t))) h.update(`${row.t}\n${row.d}\n`);
      return h.digest("hex");
    },
    async counts() {
      const out: Record<string, number> = {};
      for (const t of await tables()) out[t] = Number((await client.query(`select count(*) as n from "${t}"`)).rows[0].n);
      return out;
    },
    async close() {
      await client.end();
    },
  };
}

export async function raw(method: string, url: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const res = await fetch(url, { method, headers: init.headers, body: init.body, redirect: "manual", signal: AbortSignal.timeout(REQUEST_DEADLINE_MS) });
  const text = await res.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, text, body };
}

/** What one fuzz file sent and checked, logged when the file ends. */
export interface FuzzStats {
  cases: number;
  byStatus: Record<string, number>;
  rejectedChecked: number;
  targets: number;
}

export interface FuzzServer {
  /** The server, its seed and its database digest: set by the file's beforeAll. */
  readonly server: TestServer;
  readonly seed: Seed;
  readonly digester: Digester;
  readonly stats: FuzzStats;
  /** A request with an exact request target (fetch would normalize "//x" away). */
  rawTarget(method: string, target: string): Promise<{ status: number; text: string }>;
  /** A live session of the seeded user or admin, made again through sign-in when a fuzzed call ended it. */
  liveToken(who: "user" | "admin"): Promise<string>;
  /** Sends one case and checks the answer; returns a description for failures. */
  check(c: Case, kind: "rest" | "trpc" | "any"): Promise<void>;
}

/**
 * A server for one fuzz file, seeded in its beforeAll (a victim with a live reset token, a user,
 * an admin, a pending device code) and closed in its afterAll with a line of statistics.
 */
export function useFuzzServer(label: string): FuzzServer {
  let server: TestServer;
  let log: CapturedLog;
  let digester: Digester;
  let seed: Seed;
  const tokens: { user?: string; admin?: string } = {};
  const passwords = { user: ACTOR_PASSWORD, admin: ACTOR_PASSWORD };
  const emails = { user: "", admin: "" };
  const stats: FuzzStats = { cases: 0, byStatus: {}, rejectedChecked: 0, targets: 0 };

  function rawTarget(method: string, target: string): Promise<{ status: number; text: string }> {
    const { hostname, port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const req = httpRequest({ host: hostname, port, method, path: target, timeout: REQUEST_DEADLINE_MS }, (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (c: string) => (text += c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, text }));
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", reject);
      req.end();
    });
  }

  async function liveToken(who: "user" | "admin"): Promise<string> {
    const current = tokens[who];
    if (current) {
      const check = await raw("GET", `${server.auth}/get-session`, { headers: { authorization: `Bearer ${current}` } });
      if (check.status === 200 && check.body?.session) return current;
    }
    const res = await raw("POST", `${server.auth}/sign-in/email`, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: emails[who], password: passwords[who] }),
    });
    const token = res.headers.get("set-auth-token");
    if (res.status !== 200 || !token) throw new Error(`could not sign the ${who} in again: ${res.status} ${res.text}`);
    tokens[who] = token;
    return token;
  }

  let userKey: string | undefined;
  /** A key of the actor (no limits): made again when the fuzz has deleted it or the actor. */
  async function liveKey(): Promise<string> {
    if (userKey && (await raw("GET", `${server.auth}/get-session`, { headers: { "x-api-key": userKey } })).status === 200) return userKey;
    const me = await raw("GET", `${server.auth}/get-session`, { headers: { authorization: `Bearer ${await liveToken("user")}` } });
    userKey = (await server.portcullis.createApiKey({ userId: me.body.user.id as string, rateLimitEnabled: false })).key;
    return userKey;
  }

  async function authHeaders(kind: AuthKind): Promise<Record<string, string>> {
    const cookie = (t: string) => `portcullis.session_token=${t}`;
    switch (kind) {
      case "none":
        return {};
      case "user":
        return { authorization: `Bearer ${await liveToken("user")}` };
      case "admin":
        return { authorization: `Bearer ${await liveToken("admin")}` };
      case "admin-cookie":
        return { cookie: cookie(await liveToken("admin")), origin: TEST_ORIGIN };
      case "cookie-foreign-origin":
        return { cookie: cookie(await liveToken("admin")), origin: "https://evil.example" };
      case "cookie-null-origin":
        return { cookie: cookie(await liveToken("user")), origin: "null" };
      case "garbage-bearer":
        return { authorization: "Bearer \u00ff\u00fe not-a-token; drop table sessions" };
      case "garbage-cookie":
        return { cookie: "portcullis.session_token=%E0%A4%A; a=b; =; portcullis.session_token=x", origin: TEST_ORIGIN };
      case "user-api-key":
        return { "x-api-key": await liveKey() };
      case "garbage-api-key":
        return { "x-api-key": "pc_\u00ff\u00fe not-a-key; drop table api_keys" };
    }
  }

  async function check(c: Case, kind: "rest" | "trpc" | "any") {
    const headers: Record<string, string> = { ...c.headers, ...(await authHeaders(c.auth)) };
    if (c.contentType !== undefined && c.contentType !== "") headers["content-type"] = c.contentType;
    await server.portcullis.app.mailer.settle();
    const before = await digester.digest();
    let res: Awaited<ReturnType<typeof raw>>;
    try {
      res = await raw(c.method, `${server.url}${c.path}`, { headers, body: c.method === "GET" || c.method === "HEAD" ? undefined : c.body });
    } catch (err) {
      throw new Error(`no answer within ${REQUEST_DEADLINE_MS} ms (or connection failure) for ${c.method} ${c.path.slice(0, 200)}: ${err}`);
    }
    stats.cases += 1;
    stats.byStatus[res.status] = (stats.byStatus[res.status] ?? 0) + 1;
    const where = `${c.method} ${c.path.slice(0, 200)} [${c.auth}] body=${(c.body ?? "").slice(0, 300)} → ${res.status} ${res.text.slice(0, 300)}`;
    expect(res.status, where).toBeLessThan(500);
    expect(res.status, where).toBeGreaterThanOrEqual(200);
    if (res.status >= 400) {
      if (c.method !== "HEAD") {
        expect(res.headers.get("content-type") ?? "", where).toMatch(/^application\/json/);
        const restShape = typeof res.body?.code === "string" && typeof res.body?.message === "string";
        const oauthShape = OAUTH_ERRORS.has(res.body?.error) && typeof res.body?.error_description === "string";
        const trpcShape =
          typeof res.body?.error?.message === "string" && typeof res.body?.error?.data?.authCode === "string" && res.body.error.data.httpStatus === res.status;
        if (kind === "rest") expect(restShape || oauthShape, where).toBe(true);
        else if (kind === "trpc") expect(trpcShape, where).toBe(true);
        else expect(restShape || trpcShape || oauthShape, where).toBe(true);
      }
      await server.portcullis.app.mailer.settle();
      const after = await digester.digest();
      expect(after, `database changed by a rejected request: ${where}`).toBe(before);
      stats.rejectedChecked += 1;
    }
  }

  beforeAll(async () => {
    log = captureLog("info");
    // Rate limits on, with the database store, but high enough never to answer 429: the store
    // sees the hostile IPs and paths too.
    const high = { window: 60, max: 1_000_000 };
    server = await startTestServer(
      {
        trustProxy: true,
        // Every organization route live (teams and dynamic roles too), so fuzzing reaches their rules.
        organization: { teams: { enabled: true }, dynamicAccessControl: { enabled: true } },
        rateLimit: {
          enabled: true,
          storage: "database",
          max: 1_000_000,
          rules: {
            "/sign-in/*": high,
            "/sign-up/*": high,
            "/change-password": high,
            "/request-password-reset": high,
            "/send-verification-email": high,
            // the plugins' exact rules win over "/sign-in/*": passwordless cases must reach the services, not a 429
            "/sign-in/magic-link": high,
            "/magic-link/verify": high,
            "/sign-in/email-otp": high,
            "/email-otp/*": high,
            "/forget-password/email-otp": high,
          },
        },
      },
      { logger: log.logger },
    );
    const signUp = async (email: string, password: string) => {
      const res = await raw("POST", `${server.auth}/sign-up/email`, {
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Fuzz", email, password }),
      });
      expect(res.status, res.text).toBe(200);
      return { id: res.body.user.id as string, token: res.headers.get("set-auth-token")! };
    };
    const tag = Date.now().toString(36);
    emails.user = `fuzz.actor.${tag}@example.test`;
    emails.admin = `fuzz.admin.${tag}@example.test`;
    const victimEmail = `Fuzz.Victim.${tag}@Example.test`;
    const victim = await signUp(victimEmail, VICTIM_PASSWORD);
    tokens.user = (await signUp(emails.user, ACTOR_PASSWORD)).token;
    // the actor owns an organization (its session's active one), so organization calls get past "no active organization"
    const org = await raw("POST", `${server.auth}/organization/create`, {
      headers: { "content-type": "application/json", authorization: `Bearer ${tokens.user}` },
      body: JSON.stringify({ name: "Fuzz Org", slug: `fuzz-${tag}` }),
    });
    expect(org.status, org.text).toBe(200);
    const admin = await signUp(emails.admin, ACTOR_PASSWORD);
    await createAdmin(server.portcullis.app.orm.em.fork(), server.portcullis.app.config, { email: emails.admin });
    server.portcullis.app.sessionCache.evictUser(admin.id);
    tokens.admin = admin.token;

    // a live password reset token for the victim, read from the mail log (no SMTP configured)
    await raw("POST", `${server.auth}/request-password-reset`, { headers: { "content-type": "application/json" }, body: JSON.stringify({ email: victimEmail }) });
    await server.portcullis.app.mailer.settle();
    const link = log.lines().find((l) => typeof l.mail?.link === "string" && l.mail.link.includes("/reset-password/"))?.mail.link as string;
    const resetToken = /\/reset-password\/([^?/]+)/.exec(link)![1]!;
    // a pending device code
    const device = await raw("POST", `${server.auth}/device/code`, { headers: { "content-type": "application/json" }, body: JSON.stringify({ client_id: "fuzz-client" }) });
    expect(device.status, device.text).toBe(200);
    // an address without an account holding a live magic link and a live code of every type (the sign-in code read from the mail log),
    // so fuzzed tokens and codes reach the link's and the code's checks (a wrong guess spends a try: DIGEST_SKIP_COLUMNS)
    const passwordlessEmail = `fuzz.passwordless.${tag}@example.test`;
    const send = (path: string, body: Record<string, unknown>) =>
      raw("POST", `${server.auth}${path}`, { headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    expect((await send("/sign-in/magic-link", { email: passwordlessEmail })).status).toBe(200);
    for (const type of ["email-verification", "forget-password", "sign-in"]) {
      expect((await send("/email-otp/send-verification-otp", { email: passwordlessEmail, type })).status).toBe(200);
    }
    await server.portcullis.app.mailer.settle();
    const mailTo = (kind: string) => log.lines().find((l) => l.mail?.to === passwordlessEmail && l.mail?.kind === kind)?.mail;
    const magicLinkToken = new URL(mailTo("magicLink").link as string).searchParams.get("token")!;
    const signInCode = mailTo("emailOtp").code as string;
    seed = {
      passwordlessEmail,
      magicLinkToken,
      signInCode,
      victimEmail,
      victimId: victim.id,
      userEmail: emails.user,
      adminEmail: emails.admin,
      resetToken,
      userCode: device.body.user_code,
      deviceCode: device.body.device_code,
    };
    digester = await openDigester(server);
  }, 60_000);

  afterAll(async () => {
    const counts = digester ? await digester.counts() : {};
    await digester?.close();
    await server?.close();
    console.log(
      `[fuzz ${label} ${testDialect}] ${stats.cases} cases over ${stats.targets} targets; ${stats.rejectedChecked} rejected answers checked against the database digest; statuses ${JSON.stringify(stats.byStatus)}; rows at the end ${JSON.stringify(counts)}`,
    );
  });

  return {
    get server() {
      return server;
    },
    get seed() {
      return seed;
    },
    get digester() {
      return digester;
    },
    stats,
    rawTarget,
    liveToken,
    check,
  };
}

const fcParams = (numRuns: number) => ({ numRuns, endOnFailure: true, interruptAfterTimeLimit: 240_000 });

/** fc.assert, with a failure report short enough to read (the counterexample can be 90 KB). */
export async function property<T>(prop: fc.IAsyncProperty<T>, numRuns: number): Promise<void> {
  const out = await fc.check(prop, fcParams(numRuns));
  if (out.failed) {
    const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
    throw new Error(`property failed after ${out.numRuns} cases (seed ${out.seed}, path ${out.counterexamplePath}):\n${cause.slice(0, 3000)}`);
  }
}
