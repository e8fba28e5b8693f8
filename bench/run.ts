/**
 * `npm run bench`: Portcullis against baselines measured in the same run, on this machine.
 *
 *   get-session (Bearer, cookie)   vs a bare node:http server answering a fixed JSON of the same size
 *   get-session, cache off         same, every check a database lookup (a second server child)
 *   get-session by API key         vs get-session by Bearer (the same user): the key lookup and cache
 *   GET /token                     same baseline: a session check and an EdDSA-signed JWT
 *   GET /oauth2/userinfo           vs get-session (an access token's lookup, its user, the claims)
 *   POST /oauth2/token             vs bare node:http: client credentials (client auth, a token row written);
 *                                     authorization_code (a code spent, PKCE, access + refresh token rows,
 *                                     an EdDSA ID token) and refresh_token (rotation: the old one spent, a new
 *                                     pair and ID token), each request with the next code or refresh token
 *                                     of a pool the server child minted (BENCH_OAUTH_POOL, single-use)
 *   organization/has-permission    vs get-session measured right before it: a session check, one
 *                                     indexed membership lookup and the permission checker
 *   sign-in/email                  vs raw argon2id verifies/s (same parameters, verifies in flight =
 *                                     the server's hash slots, one per core)
 *   sign-up/email                  vs raw argon2id hashes/s
 *   start, RSS                     the compiled service as `npm start` runs it (bench/footprint.ts)
 *   get-session beside sign-ins    the same, while a sign-in flood holds the hash pool (bench/flood.ts)
 *
 * Each server runs in its own child process; autocannon runs here, so the load generator never
 * shares the server's event loop. Server CPU per request comes from the child's process.cpuUsage()
 * (all threads, so argon2 work counts), sampled over IPC right before and after each run.
 *
 * Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 1), BENCH_CONNECTIONS
 * (default 10), BENCH_JIT_WARMUP (sign-ins and sign-ups sent once before the first round so that
 * V8 has optimized their code, default 4000; see bench/lib.ts), BENCH_USERS (seeded users/sessions, default 2000), BENCH_ROUNDS (interleaved
 * repetitions, default 1; medians are reported), BENCH_ARGON2_CONCURRENCY (default: the server's hash slots, one per core),
 * BENCH_SESSION_CACHE_TTL_MS (session cache TTL of the main server; default: the server's),
 * BENCH_LOAD_SEC (footprint load, default 60; 0 skips the footprint and flood rows),
 * BENCH_WORKERS=N (`serve --workers N` vs one process), BENCH_MULTI=1 (three instances on one
 * PostgreSQL: revocation; BENCH_PG_URL), BENCH_SCALE=1 (1M users / 5M sessions on PostgreSQL,
 * bench/scale.ts, minutes; its SCALE_* variables apply),
 * BENCH_CPU_PROF=1 (a V8 .cpuprofile of the Portcullis child, in $TMPDIR/portcullis-bench-profiles/).
 * Writes bench/results/latest.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, relative } from "node:path";
import { measureMultiInstance, measureWorkers } from "./cluster.ts";
import { measureBesideFlood } from "./flood.ts";
import { measureFootprint, type Footprint } from "./footprint.ts";
import {
  CONNECTIONS, combine, DURATION, expectOk, gitDescribe, here, JIT_WARMUP, measure, measureArgon2, median, num, PROFILE, PROFILE_DIR,
  ROUNDS, startServerChild, THREAD_POOL, USERS, WARMUP, warmUp, type Child, type Measurement,
} from "./lib.ts";

const LOAD_SEC = num("BENCH_LOAD_SEC", 60);

/** The performance targets (docs/performance.md). `higher`: the figure must reach the target; otherwise stay at or below it. */
const TARGETS = {
  getSession: 0.5, getSessionCookie: 0.5, getSessionUncached: 0.25, p99OverP50: 3,
  signIn: 0.9, signUp: 0.9, startMs: 1000, idleRssMiB: 100, loadRssMiB: 150, token: 0.3, apiKey: 0.8, hasPermission: 0.5,
} as const;

interface Row {
  name: string;
  rate: string;
  p50: string;
  p99: string;
  vs: string;
  value: number | null;
  target: number | null;
  higher: boolean;
  cpu: string;
  loop: string;
  cpuRatio: string;
  bad: string;
}

const fmt = (v: number, d = 0) => v.toFixed(d);
const ms = (v: number) => (v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v.toFixed(1));

function measuredRow(name: string, m: Measurement, unit: string, vs = "", value: number | null = null, target: number | null = null, base?: Measurement): Row {
  const cpuRatio = base?.cpuMicrosPerReq && m.cpuMicrosPerReq ? base.cpuMicrosPerReq / m.cpuMicrosPerReq : null;
  return {
    name, vs, value, target, higher: true,
    rate: `${fmt(m.reqPerSec, m.reqPerSec < 1000 ? 1 : 0)} ${unit}`,
    p50: ms(m.p50), p99: ms(m.p99),
    cpu: m.cpuMicrosPerReq === null ? "" : fmt(m.cpuMicrosPerReq),
    loop: m.loopCpuMicrosPerReq === null ? "" : fmt(m.loopCpuMicrosPerReq),
    cpuRatio: cpuRatio === null ? "" : cpuRatio.toFixed(3),
    bad: `${m.non2xx}/${m.errors + m.timeouts}`,
  };
}

function figureRow(name: string, value: number, unit: string, target: number | null, higher = false, vs = ""): Row {
  return { name, rate: `${fmt(value, value < 10 ? 2 : 0)} ${unit}`, p50: "", p99: "", vs, value, target, higher, cpu: "", loop: "", cpuRatio: "", bad: "" };
}

function printTable(rows: Row[]): string {
  const met = (r: Row) => (r.value === null || r.target === null ? "" : `${r.higher ? ">=" : "<="} ${r.target} ${(r.higher ? r.value >= r.target : r.value <= r.target) ? "MET" : "MISSED"}`);
  const header = ["measurement", "rate", "p50 ms", "p99 ms", "vs", "ratio", "target", "CPU µs/req", "loop µs/req", "CPU ratio", "non-2xx/err"];
  const table = rows.map((r) => [r.name, r.rate, r.p50, r.p99, r.vs, r.value === null || r.vs === "" ? "" : r.value.toFixed(3), met(r), r.cpu, r.loop, r.cpuRatio, r.bad]);
  const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
  return [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...table.map(line)].join("\n");
}

interface ServerInfo {
  url: string;
  token: string;
  apiKey: string;
  signIn: { email: string; password: string };
  publicUrl: string;
  seedMs: number;
  cookieName: string;
  sessionCacheTtlMs: number | null;
  oauth: { accessToken: string; basic: string; pool: { prefix: string; size: number; verifier: string; redirectUri: string } };
}

async function startPortcullis(label: string, env: Record<string, string>, profile = false): Promise<{ child: Child; info: ServerInfo }> {
  process.stderr.write(`  starting Portcullis (${label}) ...`);
  const child = await startServerChild("server.ts", { BENCH_USERS: String(USERS), ...env }, profile);
  const info = child.info as unknown as ServerInfo;
  process.stderr.write(` ${info.url} (seeded in ${info.seedMs} ms, cache TTL ${info.sessionCacheTtlMs} ms)\n`);
  return { child, info };
}

/** Token requests that each spend the next single-use code ("c") or refresh token ("r") of the server's pool; one past its end fails loudly. */
const poolNext: Record<string, number> = { c: 0, r: 0 };
function pooled(auth: string, headers: Record<string, string>, info: ServerInfo, kind: "c" | "r", body: (value: string) => string) {
  const { prefix, size } = info.oauth.pool;
  const path = new URL(`${auth}/oauth2/token`).pathname;
  return {
    url: `${auth}/oauth2/token`,
    requests: [{
      method: "POST", path, headers,
      setupRequest: (req: object) => {
        const i = poolNext[kind]!++;
        if (i >= size) throw new Error(`the ${kind === "c" ? "code" : "refresh token"} pool (${size}) ran out: raise BENCH_OAUTH_POOL`);
        return { ...req, body: body(`${prefix}-${kind}${i}`) };
      },
    }],
  };
}

async function main() {
  const started = Date.now();
  process.stderr.write(
    `portcullis bench: ${DURATION} s per measurement, ${CONNECTIONS} connections, ${USERS} seeded users, ` +
      `${ROUNDS} round(s), libuv pool ${THREAD_POOL}, ${cpus().length} CPUs\n`,
  );
  const loadAtStart = loadavg()[0]!;
  if (loadAtStart > cpus().length * 0.5) {
    process.stderr.write(`  WARNING: load average ${loadAtStart.toFixed(2)} on ${cpus().length} CPUs: something else is running; numbers will be noisy\n`);
  }
  const children: Child[] = [];
  try {
    const cacheEnv: Record<string, string> = process.env.BENCH_SESSION_CACHE_TTL_MS ? { BENCH_SESSION_CACHE_TTL_MS: process.env.BENCH_SESSION_CACHE_TTL_MS } : {};
    // Enough single-use codes and refresh tokens for the warm-up and measurement of each round, at 4000 req/s.
    const oauthPool = num("BENCH_OAUTH_POOL", 4000 * (DURATION + WARMUP + 1) * ROUNDS);
    const { child: server, info } = await startPortcullis("SQLite", { ...cacheEnv, BENCH_OAUTH_POOL: String(oauthPool) }, PROFILE);
    children.push(server);
    const { child: uncached, info: uncachedInfo } = await startPortcullis("SQLite, session cache off", { BENCH_SESSION_CACHE_TTL_MS: "0" });
    children.push(uncached);
    const auth = `${info.url}/api/auth`;
    const jsonHeaders = { "content-type": "application/json", origin: new URL(info.publicUrl).origin };
    const bearer = { authorization: `Bearer ${info.token}` };
    const cookie = { cookie: `${info.cookieName}=${info.token}` };

    // The seeded user owns an organization (its session's active one): has-permission's subject.
    const orgCreated = await fetch(`${auth}/organization/create`, { method: "POST", headers: { "content-type": "application/json", ...bearer }, body: JSON.stringify({ name: "Bench Org", slug: `bench-${process.pid}-${Date.now()}` }) });
    await expectOk(orgCreated, "organization/create");
    const hasPermissionOpts = { url: `${auth}/organization/has-permission`, method: "POST", headers: { "content-type": "application/json", ...bearer }, body: JSON.stringify({ permissions: { member: ["create"] } }) } as const;
    const permitted = await expectOk(await fetch(hasPermissionOpts.url, hasPermissionOpts), "organization/has-permission");
    if (JSON.parse(permitted).success !== true) throw new Error(`has-permission did not grant the owner: ${permitted}`);

    // Sanity checks: every endpoint answers 200 (and get-session a user) before we measure it.
    const sessionBody = await expectOk(await fetch(`${auth}/get-session`, { headers: bearer }), "get-session");
    if (!(JSON.parse(sessionBody) as { user?: { email?: string } } | null)?.user?.email) throw new Error(`get-session did not return a user: ${sessionBody}`);
    const viaCookie = await expectOk(await fetch(`${auth}/get-session`, { headers: cookie }), "get-session (cookie)");
    if (viaCookie !== sessionBody) throw new Error(`get-session by cookie answered differently: ${viaCookie}`);
    await expectOk(await fetch(`${uncachedInfo.url}/api/auth/get-session`, { headers: { authorization: `Bearer ${uncachedInfo.token}` } }), "get-session (cache off)");
    await expectOk(await fetch(`${auth}/token`, { headers: bearer }), "token");
    const byKey = { "x-api-key": info.apiKey };
    const keyBody = await expectOk(await fetch(`${auth}/get-session`, { headers: byKey }), "get-session (API key)");
    if ((JSON.parse(keyBody) as { user?: { email?: string } }).user?.email !== (JSON.parse(sessionBody) as { user: { email: string } }).user.email) {
      throw new Error(`get-session by API key answered another user: ${keyBody}`);
    }
    await expectOk(await fetch(`${auth}/sign-in/email`, { method: "POST", headers: jsonHeaders, body: JSON.stringify(info.signIn) }), "sign-in/email");
    const runId = `${process.pid.toString(36)}${Date.now().toString(36)}`;
    let seq = 0;
    const signUpBody = () => JSON.stringify({ name: "Bench Signup", email: `su-${runId}-${seq++}@example.com`, password: "bench-password-123" });
    await expectOk(await fetch(`${auth}/sign-up/email`, { method: "POST", headers: jsonHeaders, body: signUpBody() }), "sign-up/email");

    process.stderr.write("  starting bare node:http baseline ...");
    const bare = await startServerChild("bare.ts", { BENCH_BARE_BODY: sessionBody });
    children.push(bare);
    process.stderr.write(` ${bare.info.url} (${String(bare.info.bytes)} B body, same as get-session)\n`);

    const signInOpts = { url: `${auth}/sign-in/email`, method: "POST", headers: jsonHeaders, body: JSON.stringify(info.signIn) } as const;
    // A unique email per request.
    const signUpOpts = {
      url: `${auth}/sign-up/email`,
      requests: [{ method: "POST", path: "/api/auth/sign-up/email", headers: jsonHeaders, setupRequest: (req: object) => ({ ...req, body: signUpBody() }) }],
    };
    await warmUp("sign-in", signInOpts, JIT_WARMUP);
    await warmUp("sign-up", signUpOpts, JIT_WARMUP);

    const names = ["bare", "getSession", "getSessionApiKey", "getSessionCookie", "bareAgain", "getSessionUncached", "token", "userinfo", "oauthToken", "oauthCode", "oauthRefresh", "getSessionBeforePermission", "hasPermission", "argon2Verify", "signIn", "argon2Hash", "signUp"] as const;
    const rounds = Object.fromEntries(names.map((n) => [n, [] as Measurement[]])) as Record<(typeof names)[number], Measurement[]>;
    const argonMeta: { concurrency?: number; options?: Record<string, number> } = {};
    for (let round = 1; round <= ROUNDS; round++) {
      if (ROUNDS > 1) process.stderr.write(`round ${round}/${ROUNDS}\n`);
      // Each baseline runs right before what it is compared with: same machine conditions.
      rounds.bare.push(await measure("bare node:http", bare, { url: `${bare.info.url}/` }));
      rounds.getSession.push(await measure("GET get-session (Bearer)", server, { url: `${auth}/get-session`, headers: bearer }));
      rounds.getSessionApiKey.push(await measure("GET get-session (API key)", server, { url: `${auth}/get-session`, headers: byKey }));
      rounds.getSessionCookie.push(await measure("GET get-session (cookie)", server, { url: `${auth}/get-session`, headers: cookie }));
      rounds.bareAgain.push(await measure("bare node:http", bare, { url: `${bare.info.url}/` }));
      rounds.getSessionUncached.push(
        await measure("GET get-session (cache off)", uncached, { url: `${uncachedInfo.url}/api/auth/get-session`, headers: { authorization: `Bearer ${uncachedInfo.token}` } }),
      );
      rounds.token.push(await measure("GET /token", server, { url: `${auth}/token`, headers: bearer }));
      rounds.userinfo.push(await measure("GET /oauth2/userinfo", server, { url: `${auth}/oauth2/userinfo`, headers: { authorization: `Bearer ${info.oauth.accessToken}` } }));
      const form = { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${info.oauth.basic}` };
      rounds.oauthToken.push(await measure("POST /oauth2/token (client credentials)", server, { url: `${auth}/oauth2/token`, method: "POST", headers: form, body: "grant_type=client_credentials" }));
      rounds.oauthCode.push(await measure("POST /oauth2/token (authorization_code)", server, pooled(auth, form, info, "c", (code) =>
        `grant_type=authorization_code&code=${code}&code_verifier=${info.oauth.pool.verifier}&redirect_uri=${encodeURIComponent(info.oauth.pool.redirectUri)}`)));
      rounds.oauthRefresh.push(await measure("POST /oauth2/token (refresh_token)", server, pooled(auth, form, info, "r", (token) => `grant_type=refresh_token&refresh_token=${token}`)));
      rounds.getSessionBeforePermission.push(await measure("GET get-session (Bearer)", server, { url: `${auth}/get-session`, headers: bearer }));
      rounds.hasPermission.push(await measure("POST organization/has-permission", server, hasPermissionOpts));
      const verify = await measureArgon2("verify");
      Object.assign(argonMeta, { concurrency: verify.concurrency, options: verify.options });
      rounds.argon2Verify.push(verify);
      rounds.signIn.push(await measure("POST sign-in/email", server, signInOpts));
      rounds.argon2Hash.push(await measureArgon2("hash"));
      rounds.signUp.push(await measure("POST sign-up/email", server, signUpOpts));
    }
    const footprint: Footprint | null = LOAD_SEC > 0 ? await measureFootprint(LOAD_SEC) : null;
    const flood = LOAD_SEC > 0 ? await measureBesideFlood() : null;
    const workers = num("BENCH_WORKERS", 0);
    const scaleOut = workers > 1 ? await measureWorkers(workers) : null;
    const multi = process.env.BENCH_MULTI === "1" ? await measureMultiInstance() : null;
    const scale = process.env.BENCH_SCALE === "1" ? await (await import("./scale.ts")).runScale({ log: (l) => process.stderr.write(`  ${l}\n`) }) : null;

    const m = Object.fromEntries(names.map((n) => [n, combine(rounds[n])])) as unknown as Record<(typeof names)[number], Measurement>;
    // Paired: each round's ratio to the baseline measured right before it, then the median.
    const ratio = (ms: Measurement[], bases: Measurement[]) => median(ms.map((x, i) => x.reqPerSec / bases[i]!.reqPerSec));
    const rows: Row[] = [
      measuredRow("bare node:http (fixed JSON)", m.bare, "req/s"),
      measuredRow("GET /get-session (Bearer)", m.getSession, "req/s", "bare http", ratio(rounds.getSession, rounds.bare), TARGETS.getSession, m.bare),
      measuredRow("GET /get-session (API key)", m.getSessionApiKey, "req/s", "Bearer", ratio(rounds.getSessionApiKey, rounds.getSession), TARGETS.apiKey, m.getSession),
      measuredRow("GET /get-session (cookie)", m.getSessionCookie, "req/s", "bare http", ratio(rounds.getSessionCookie, rounds.bare), TARGETS.getSessionCookie, m.bare),
      figureRow("  get-session p99 / p50", m.getSession.p99 / m.getSession.p50, "x", TARGETS.p99OverP50),
      // The same figure for the baseline: what this machine's scheduling alone does to the tail.
      figureRow("  bare node:http p99 / p50 (reference)", m.bare.p99 / m.bare.p50, "x", null),
      measuredRow("GET /get-session (cache off)", m.getSessionUncached, "req/s", "bare http", ratio(rounds.getSessionUncached, rounds.bareAgain), TARGETS.getSessionUncached, m.bareAgain),
      measuredRow("GET /token (a signed JWT)", m.token, "req/s", "bare http", ratio(rounds.token, rounds.bareAgain), TARGETS.token, m.bareAgain),
      measuredRow("GET /oauth2/userinfo", m.userinfo, "req/s", "get-session", ratio(rounds.userinfo, rounds.getSession), null, m.getSession),
      measuredRow("POST /oauth2/token (client credentials)", m.oauthToken, "req/s", "bare http", ratio(rounds.oauthToken, rounds.bareAgain), null, m.bareAgain),
      measuredRow("POST /oauth2/token (authorization_code)", m.oauthCode, "req/s", "bare http", ratio(rounds.oauthCode, rounds.bareAgain), null, m.bareAgain),
      measuredRow("POST /oauth2/token (refresh_token)", m.oauthRefresh, "req/s", "bare http", ratio(rounds.oauthRefresh, rounds.bareAgain), null, m.bareAgain),
      measuredRow("POST /organization/has-permission", m.hasPermission, "req/s", "get-session", ratio(rounds.hasPermission, rounds.getSessionBeforePermission), TARGETS.hasPermission, m.getSessionBeforePermission),
      measuredRow(`argon2id verify (x${argonMeta.concurrency})`, m.argon2Verify, "ops/s"),
      measuredRow("POST /sign-in/email", m.signIn, "req/s", "argon2 verify", ratio(rounds.signIn, rounds.argon2Verify), TARGETS.signIn, m.argon2Verify),
      measuredRow(`argon2id hash (x${argonMeta.concurrency})`, m.argon2Hash, "ops/s"),
      measuredRow("POST /sign-up/email", m.signUp, "req/s", "argon2 hash", ratio(rounds.signUp, rounds.argon2Hash), TARGETS.signUp, m.argon2Hash),
    ];
    if (footprint) {
      rows.push(
        figureRow("start to first answer (compiled)", footprint.startMs, "ms", TARGETS.startMs),
        figureRow("  first start, fresh database", footprint.firstStartMs, "ms", TARGETS.startMs),
        // The same start of a bare node:http server: what this machine takes to start node at all.
        figureRow("  bare node:http start (reference)", footprint.bareStartMs, "ms", null),
        figureRow("RSS idle (compiled)", footprint.idleRssMiB, "MiB", TARGETS.idleRssMiB),
        figureRow(`RSS after ${footprint.loadSec} s of load`, footprint.loadRssMiB, "MiB", TARGETS.loadRssMiB),
        figureRow("  RSS peak during load", footprint.peakRssMiB, "MiB", TARGETS.loadRssMiB),
      );
    }
    if (flood) {
      rows.push(
        figureRow("get-session p99 beside a sign-in flood (compiled)", flood.lowered.p99, "ms", null),
        figureRow("  same, hash pool level with the event loop (reference)", flood.level.p99, "ms", null),
      );
    }
    if (scaleOut) {
      rows.push(
        figureRow(`serve --workers ${workers}: get-session, measured`, scaleOut.ratio, "x", null, true, "1 process"),
        figureRow(`serve --workers ${workers}: on ${workers} free cores (CPU/req, equal load)`, scaleOut.equalLoadProjected, "x", 0.8 * workers, true, "1 process"),
        figureRow(`  same from saturated runs (${workers + 1} busy processes on the cores)`, scaleOut.projected, "x", null, true, "1 process"),
      );
    }
    if (multi) {
      rows.push(
        figureRow(`3 instances: stale allows after the answer (${multi.revokes} revokes)`, multi.stale, "", 0),
        figureRow("3 instances: revocation seen, p99", multi.p99, "ms", 100),
      );
    }
    for (const r of scale ?? []) rows.push(figureRow(`scale: ${r.name}`, r.value, r.unit, r.target, r.higher ?? false));
    process.stdout.write(`\n${printTable(rows)}\n`);
    process.stdout.write(
      `\n${DURATION} s each, ${CONNECTIONS} connections, ${USERS} seeded users, ${ROUNDS} round(s)${ROUNDS > 1 ? " (medians; ratios paired per round)" : ""}, ` +
        `session cache TTL ${info.sessionCacheTtlMs ?? "n/a"} ms, rate limits off, ${JIT_WARMUP} sign-ins and sign-ups before the first round (JIT warm-up).\n` +
        `CPU µs/req = server child process (all threads, so argon2 counts); loop µs/req = its main thread only; ` +
        `CPU ratio = baseline CPU per op / CPU per request (the throughput ratio if both were CPU-bound).\n`,
    );

    const measured = rows.filter((r) => r.bad !== "");
    const bad = measured.filter((r) => r.bad !== "0/0");
    const report = {
      generatedAt: new Date().toISOString(),
      git: gitDescribe(),
      machine: {
        cpus: cpus().length, cpuModel: cpus()[0]?.model ?? null, totalMemMiB: Math.round(totalmem() / 2 ** 20),
        loadavg1AtStart: loadAtStart, busy: loadAtStart > cpus().length * 0.5, loadavgAtEnd: loadavg(),
        node: process.version, platform: `${process.platform}-${process.arch}`,
      },
      settings: { durationSec: DURATION, warmupSec: WARMUP, jitWarmupRequests: JIT_WARMUP, connections: CONNECTIONS, seededUsers: USERS, rounds: ROUNDS, threadPoolSize: THREAD_POOL, database: "sqlite (WAL, temp file)", sessionCacheTtlMs: info.sessionCacheTtlMs, rateLimit: false, loadSec: LOAD_SEC },
      targets: TARGETS,
      rows: rows.map(({ name, value, target, higher }) => ({ name, value, target, met: value === null || target === null ? null : higher ? value >= target : value <= target })),
      results: { ...m, argon2Meta: argonMeta, footprint, besideFlood: flood, workers: scaleOut, multiInstance: multi, scale },
      totalSec: Math.round((Date.now() - started) / 100) / 10,
      valid: bad.length === 0,
    };
    const file = join(here, "results", "latest.json");
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
    process.stdout.write(`wrote ${relative(process.cwd(), file)} (${report.totalSec} s total)\n`);
    if (bad.length) {
      process.stderr.write(`WARNING: non-2xx responses or errors in: ${bad.map((r) => r.name).join(", ")}; numbers are not valid\n`);
      process.exitCode = 1;
    }
  } finally {
    await Promise.all(children.map((c) => c.stop().catch(() => undefined)));
    if (PROFILE) process.stderr.write(`CPU profile of the Portcullis child: ${PROFILE_DIR}/ (open in Chrome DevTools)\n`);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`\nbench failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
