/**
 * `npm run bench`: Portcullis (SQLite, rate limits off) against its baselines, on this machine.
 *
 *   get-session (Bearer)      vs a bare node:http server answering a fixed JSON of the same size
 *   sign-in/email, sign-up    vs raw argon2id verifies/s (same parameters, verifies in flight =
 *                                libuv thread pool size)
 *
 * Each server runs in its own child process; autocannon runs here, so the load generator never
 * shares the server's event loop. Server CPU per request comes from the child's process.cpuUsage()
 * (all threads, so argon2 work counts), sampled over IPC right before and after each run.
 *
 * Environment: BENCH_DURATION (s, default 10), BENCH_WARMUP (s, default 1), BENCH_CONNECTIONS
 * (default 10), BENCH_USERS (seeded users/sessions, default 2000), BENCH_ROUNDS (interleaved
 * repetitions, default 1; medians are reported), BENCH_ARGON2_CONCURRENCY (default: pool size),
 * BENCH_SESSION_CACHE_TTL_MS (session cache TTL for the server; 0 = off; default: the server's),
 * BENCH_CPU_PROF=1 (a V8 .cpuprofile of the Portcullis child, in $TMPDIR/portcullis-bench-profiles/).
 * Writes bench/results/latest.json.
 */
import autocannon, { type Options, type Result } from "autocannon";
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir, totalmem } from "node:os";
import { createHistogram } from "node:perf_hooks";
import { dirname, join, relative } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { CpuSample } from "./probe.ts";

const here = dirname(fileURLToPath(import.meta.url));
const root = join(here, "..");

const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return v;
};
const DURATION = num("BENCH_DURATION", 10);
const WARMUP = num("BENCH_WARMUP", 1);
const CONNECTIONS = num("BENCH_CONNECTIONS", 10);
const USERS = num("BENCH_USERS", 2000);
const ROUNDS = Math.max(1, num("BENCH_ROUNDS", 1));
const THREAD_POOL = Number(process.env.UV_THREADPOOL_SIZE) || 4;
/** BENCH_CPU_PROF=1: the Portcullis child writes a V8 .cpuprofile into PROFILE_DIR on exit. */
const PROFILE = process.env.BENCH_CPU_PROF === "1";
const PROFILE_DIR = join(tmpdir(), "portcullis-bench-profiles");

const TARGETS = { getSession: 0.5, signIn: 0.8 } as const;

// ---------------------------------------------------------------------------------------------
// Child processes

interface Child {
  proc: ChildProcess;
  info: Record<string, unknown> & { url: string };
  /** user + system CPU of the child (all its threads, and its main thread alone), microseconds. */
  cpu(): Promise<CpuSample>;
  stop(): Promise<void>;
}

function forkTs(file: string, env: Record<string, string>, profile = false): ChildProcess {
  return fork(join(here, file), [], {
    cwd: root,
    execArgv: ["--import", "tsx", ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [])],
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
}

function startServerChild(file: string, env: Record<string, string> = {}, profile = false): Promise<Child> {
  const proc = forkTs(file, env, profile);
  let nextId = 0;
  const pending = new Map<number, (v: CpuSample) => void>();
  proc.on("message", (m: { type?: string; id?: number } & CpuSample) => {
    if (m?.type === "cpu" && m.id !== undefined) {
      pending.get(m.id)?.({ cpuMicros: m.cpuMicros, mainThreadCpuMicros: m.mainThreadCpuMicros ?? null });
      pending.delete(m.id);
    }
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  return new Promise<Child>((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`${file}: not ready after 180 s`));
    }, 180_000);
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`${file} exited before it was ready (code ${code})`));
    });
    const lines = createInterface({ input: proc.stdout! });
    lines.on("line", (line) => {
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line) as Record<string, unknown>;
      } catch {
        process.stderr.write(`[${file}] ${line}\n`);
        return;
      }
      if (msg.ready !== true) return;
      clearTimeout(timer);
      resolve({
        proc,
        info: msg as Child["info"],
        cpu: () =>
          new Promise<CpuSample>((res) => {
            const id = nextId++;
            pending.set(id, res);
            proc.send({ type: "cpu", id });
          }),
        async stop() {
          if (proc.exitCode !== null || proc.signalCode !== null) return;
          proc.send({ type: "stop" });
          const t = setTimeout(() => proc.kill("SIGKILL"), 10_000);
          await exited;
          clearTimeout(t);
        },
      });
    });
  });
}

/** One-shot child: runs, prints a JSON line, exits. */
function runOnce<T>(file: string, env: Record<string, string>): Promise<T> {
  const proc = forkTs(file, env);
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  return new Promise<T>((resolve, reject) => {
    proc.once("exit", (code) => {
      const last = out.trim().split("\n").pop() ?? "";
      if (code !== 0) return reject(new Error(`${file} exited with code ${code}: ${out}`));
      try {
        resolve(JSON.parse(last) as T);
      } catch {
        reject(new Error(`${file}: unreadable output: ${out}`));
      }
    });
  });
}

// ---------------------------------------------------------------------------------------------
// Measurements

interface Measurement {
  reqPerSec: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  cpuMicrosPerReq: number | null;
  /** Main (event-loop) thread only: the part that cannot spread over cores. */
  loopCpuMicrosPerReq: number | null;
  statusCodes?: Record<string, number>;
}

async function measure(label: string, child: Child, opts: Options): Promise<Measurement> {
  process.stderr.write(`  ${label}: ${WARMUP ? `${WARMUP} s warm-up + ` : ""}${DURATION} s ...`);
  if (WARMUP > 0) await autocannon({ ...opts, connections: CONNECTIONS, duration: WARMUP });
  // autocannon's own latency histogram has 1 ms resolution; its 'response' event carries the
  // hrtime duration, so percentiles are taken from that (2xx only, as autocannon does).
  const hist = createHistogram();
  const cpu0 = await child.cpu();
  const instance = autocannon({ ...opts, connections: CONNECTIONS, duration: DURATION });
  instance.on("response", (_client: unknown, status: number, _bytes: number, ms: number) => {
    if (status >= 200 && status < 300) hist.record(Math.max(1, Math.round(ms * 1e6)));
  });
  const r: Result = await instance;
  const cpu1 = await child.cpu();
  const requests = r.requests.total;
  const m: Measurement = {
    reqPerSec: requests / r.duration,
    p50: hist.count ? hist.percentile(50) / 1e6 : r.latency.p50,
    p99: hist.count ? hist.percentile(99) / 1e6 : r.latency.p99,
    requests,
    non2xx: r.non2xx,
    errors: r.errors,
    timeouts: r.timeouts,
    cpuMicrosPerReq: requests > 0 ? (cpu1.cpuMicros - cpu0.cpuMicros) / requests : null,
    loopCpuMicrosPerReq:
      requests > 0 && cpu0.mainThreadCpuMicros !== null && cpu1.mainThreadCpuMicros !== null
        ? (cpu1.mainThreadCpuMicros - cpu0.mainThreadCpuMicros) / requests
        : null,
    statusCodes: Object.fromEntries(Object.entries(r.statusCodeStats ?? {}).map(([k, v]) => [k, Number(v.count)])),
  };
  process.stderr.write(` ${m.reqPerSec.toFixed(0)} req/s\n`);
  return m;
}

interface ArgonResult {
  opsPerSec: number;
  ops: number;
  concurrency: number;
  threadPoolSize: number;
  p50: number;
  p99: number;
  cpuMicrosPerOp: number;
  loopCpuMicrosPerOp: number | null;
  options: Record<string, number>;
}

async function measureArgon2(): Promise<Measurement & { concurrency: number; options: Record<string, number> }> {
  process.stderr.write(`  argon2 verify: ${WARMUP ? `${WARMUP} s warm-up + ` : ""}${DURATION} s ...`);
  const r = await runOnce<ArgonResult>("argon2.ts", { BENCH_DURATION: String(DURATION), BENCH_WARMUP: String(WARMUP) });
  process.stderr.write(` ${r.opsPerSec.toFixed(1)} verifies/s (${r.concurrency} in flight)\n`);
  return {
    reqPerSec: r.opsPerSec,
    p50: r.p50,
    p99: r.p99,
    requests: r.ops,
    non2xx: 0,
    errors: 0,
    timeouts: 0,
    cpuMicrosPerReq: r.cpuMicrosPerOp,
    loopCpuMicrosPerReq: r.loopCpuMicrosPerOp,
    concurrency: r.concurrency,
    options: r.options,
  };
}

const pickRatios = (r: { ratio: number; cpuRatio: number | null }) => ({ ratio: r.ratio, cpuRatio: r.cpuRatio });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

function combine<M extends Measurement>(runs: M[]): M & { rounds: Measurement[] } {
  const pick = (f: (m: Measurement) => number) => median(runs.map(f));
  const cpus = runs.map((m) => m.cpuMicrosPerReq).filter((v): v is number => v !== null);
  const loops = runs.map((m) => m.loopCpuMicrosPerReq).filter((v): v is number => v !== null);
  return {
    ...runs[0]!,
    reqPerSec: pick((m) => m.reqPerSec),
    p50: pick((m) => m.p50),
    p99: pick((m) => m.p99),
    requests: runs.reduce((a, m) => a + m.requests, 0),
    non2xx: runs.reduce((a, m) => a + m.non2xx, 0),
    errors: runs.reduce((a, m) => a + m.errors, 0),
    timeouts: runs.reduce((a, m) => a + m.timeouts, 0),
    cpuMicrosPerReq: cpus.length ? median(cpus) : null,
    loopCpuMicrosPerReq: loops.length ? median(loops) : null,
    rounds: runs,
  };
}

// ---------------------------------------------------------------------------------------------

async function expectOk(res: Response, what: string): Promise<string> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

function gitDescribe(): string | null {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "rest-bridge"], { cwd: root, encoding: "utf8" }).trim();
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return null;
  }
}

async function main() {
  const started = Date.now();
  process.stderr.write(
    `portcullis bench: ${DURATION} s per measurement, ${CONNECTIONS} connections, ${USERS} seeded users, ` +
      `${ROUNDS} round(s), libuv pool ${THREAD_POOL}, ${cpus().length} CPUs\n`,
  );
  const loadAtStart = loadavg()[0]!;
  if (loadAtStart > cpus().length * 0.5) {
    process.stderr.write(
      `  WARNING: load average ${loadAtStart.toFixed(2)} on ${cpus().length} CPUs: something else is running; numbers will be noisy\n`,
    );
  }
  const children: Child[] = [];
  try {
    process.stderr.write("  starting Portcullis (SQLite, seeding) ...");
    const serverEnv: Record<string, string> = { BENCH_USERS: String(USERS) };
    if (process.env.BENCH_SESSION_CACHE_TTL_MS) serverEnv.BENCH_SESSION_CACHE_TTL_MS = process.env.BENCH_SESSION_CACHE_TTL_MS;
    const server = await startServerChild("server.ts", serverEnv, PROFILE);
    children.push(server);
    const info = server.info as Child["info"] & {
      token: string;
      signIn: { email: string; password: string };
      publicUrl: string;
      seedMs: number;
    };
    process.stderr.write(` ${info.url} (seeded in ${info.seedMs} ms)\n`);
    const auth = `${info.url}/api/auth`;
    const origin = new URL(info.publicUrl).origin;
    const jsonHeaders = { "content-type": "application/json", origin };

    // Sanity checks: every endpoint answers 200 before we measure it.
    const sessionBody = await expectOk(
      await fetch(`${auth}/get-session`, { headers: { authorization: `Bearer ${info.token}` } }),
      "get-session",
    );
    if (!(JSON.parse(sessionBody) as { user?: { email?: string } } | null)?.user?.email) {
      throw new Error(`get-session did not return a user: ${sessionBody}`);
    }
    await expectOk(
      await fetch(`${auth}/sign-in/email`, { method: "POST", headers: jsonHeaders, body: JSON.stringify(info.signIn) }),
      "sign-in/email",
    );
    const runId = `${process.pid.toString(36)}${Date.now().toString(36)}`;
    let seq = 0;
    const signUpBody = () =>
      JSON.stringify({ name: "Bench Signup", email: `su-${runId}-${seq++}@example.com`, password: "bench-password-123" });
    await expectOk(await fetch(`${auth}/sign-up/email`, { method: "POST", headers: jsonHeaders, body: signUpBody() }), "sign-up/email");

    process.stderr.write("  starting bare node:http baseline ...");
    const bare = await startServerChild("bare.ts", { BENCH_BARE_BODY: sessionBody });
    children.push(bare);
    process.stderr.write(` ${bare.info.url} (${String(bare.info.bytes)} B body, same as get-session)\n`);

    const rounds: Record<"bare" | "getSession" | "argon2" | "signIn" | "signUp", Measurement[]> = {
      bare: [], getSession: [], argon2: [], signIn: [], signUp: [],
    };
    const argonMeta: { concurrency?: number; options?: Record<string, number> } = {};
    for (let round = 1; round <= ROUNDS; round++) {
      if (ROUNDS > 1) process.stderr.write(`round ${round}/${ROUNDS}\n`);
      // Each baseline runs right before what it is compared with: same machine conditions.
      rounds.bare.push(await measure("bare node:http", bare, { url: `${bare.info.url}/` }));
      rounds.getSession.push(
        await measure("GET get-session", server, {
          url: `${auth}/get-session`,
          headers: { authorization: `Bearer ${info.token}` },
        }),
      );
      const a = await measureArgon2();
      argonMeta.concurrency = a.concurrency;
      argonMeta.options = a.options;
      rounds.argon2.push(a);
      rounds.signIn.push(
        await measure("POST sign-in/email", server, {
          url: `${auth}/sign-in/email`,
          method: "POST",
          headers: jsonHeaders,
          body: JSON.stringify(info.signIn),
        }),
      );
      rounds.signUp.push(
        await measure("POST sign-up/email", server, {
          url: `${auth}/sign-up/email`,
          requests: [
            {
              method: "POST",
              path: "/api/auth/sign-up/email",
              headers: jsonHeaders,
              // A unique email per request.
              setupRequest: (req) => ({ ...req, body: signUpBody() }),
            },
          ],
        }),
      );
    }

    const bareM = combine(rounds.bare);
    const getSession = combine(rounds.getSession);
    const argon2 = combine(rounds.argon2);
    const signIn = combine(rounds.signIn);
    const signUp = combine(rounds.signUp);
    // Paired: each round's ratio to the baseline measured right before it, then the median.
    const ratio = (ms: Measurement[], bases: Measurement[]) => median(ms.map((m, i) => m.reqPerSec / bases[i]!.reqPerSec));
    // Throughput ratio implied by server CPU alone (baseline CPU per op / this CPU per request):
    // steadier than req/s on a shared machine; equals the req/s ratio when both are CPU-bound.
    const cpuRatio = (m: Measurement, base: Measurement) =>
      m.cpuMicrosPerReq && base.cpuMicrosPerReq ? base.cpuMicrosPerReq / m.cpuMicrosPerReq : null;
    const results = {
      bareHttp: { ...bareM, baseline: null, ratio: null, cpuRatio: null },
      getSession: {
        ...getSession, baseline: "bareHttp", ratio: ratio(rounds.getSession, rounds.bare),
        cpuRatio: cpuRatio(getSession, bareM), target: TARGETS.getSession,
      },
      argon2Verify: { ...argon2, ...argonMeta, baseline: null, ratio: null, cpuRatio: null },
      signInEmail: {
        ...signIn, baseline: "argon2Verify", ratio: ratio(rounds.signIn, rounds.argon2),
        cpuRatio: cpuRatio(signIn, argon2), target: TARGETS.signIn,
      },
      signUpEmail: {
        ...signUp, baseline: "argon2Verify", ratio: ratio(rounds.signUp, rounds.argon2),
        cpuRatio: cpuRatio(signUp, argon2), target: null,
      },
    };

    // ----- table
    type Row = { name: string; m: Measurement; unit: string; base: string; ratio: number | null; cpuRatio: number | null; target: number | null };
    const rows: Row[] = [
      { name: "bare node:http (fixed JSON)", m: bareM, unit: "req/s", base: "", ratio: null, cpuRatio: null, target: null },
      { name: "GET /get-session (Bearer)", m: getSession, unit: "req/s", base: "bare http", ...pickRatios(results.getSession), target: TARGETS.getSession },
      { name: `argon2id verify (x${argonMeta.concurrency})`, m: argon2, unit: "ops/s", base: "", ratio: null, cpuRatio: null, target: null },
      { name: "POST /sign-in/email", m: signIn, unit: "req/s", base: "argon2", ...pickRatios(results.signInEmail), target: TARGETS.signIn },
      { name: "POST /sign-up/email", m: signUp, unit: "req/s", base: "argon2", ...pickRatios(results.signUpEmail), target: null },
    ];
    const fmt = (v: number, d = 0) => v.toFixed(d);
    const ms = (v: number) => (v < 1 ? v.toFixed(3) : v < 10 ? v.toFixed(2) : v.toFixed(1));
    const header = ["measurement", "rate", "p50 ms", "p99 ms", "vs", "ratio", "target", "CPU µs/req", "loop µs/req", "CPU ratio", "non-2xx/err"];
    const table = rows.map((r) => [
      r.name,
      `${fmt(r.m.reqPerSec, r.m.reqPerSec < 1000 ? 1 : 0)} ${r.unit}`,
      ms(r.m.p50),
      ms(r.m.p99),
      r.base,
      r.ratio === null ? "" : r.ratio.toFixed(3),
      r.target === null ? "" : `>= ${r.target} ${r.ratio !== null && r.ratio >= r.target ? "MET" : "MISSED"}`,
      r.m.cpuMicrosPerReq === null ? "" : fmt(r.m.cpuMicrosPerReq),
      r.m.loopCpuMicrosPerReq === null ? "" : fmt(r.m.loopCpuMicrosPerReq),
      r.cpuRatio === null ? "" : r.cpuRatio.toFixed(3),
      `${r.m.non2xx}/${r.m.errors + r.m.timeouts}`,
    ]);
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((row) => row[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join("  ");
    const out = [line(header), widths.map((w) => "-".repeat(w)).join("  "), ...table.map(line)].join("\n");
    process.stdout.write(`\n${out}\n`);
    process.stdout.write(
      `\n${DURATION} s each, ${CONNECTIONS} connections, ${USERS} seeded users, ` +
        `${ROUNDS} round(s)${ROUNDS > 1 ? " (medians; ratios paired per round)" : ""}, ` +
        `session cache TTL ${server.info.sessionCacheTtlMs === null ? "n/a" : `${String(server.info.sessionCacheTtlMs)} ms`}.\n` +
        `CPU µs/req = server child process (all threads, so argon2 counts); loop µs/req = its main thread only; ` +
        `CPU ratio = baseline CPU per op / CPU per request (the throughput ratio if both were CPU-bound).\n`,
    );

    const bad = rows.filter((r) => r.m.non2xx > 0 || r.m.errors > 0 || r.m.timeouts > 0);
    const report = {
      generatedAt: new Date().toISOString(),
      git: gitDescribe(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? null,
        totalMemMiB: Math.round(totalmem() / 2 ** 20),
        loadavg1AtStart: loadAtStart,
        /** Load above half the CPUs at start: other work shared the machine; req/s ratios are unreliable. */
        busy: loadAtStart > cpus().length * 0.5,
        loadavgAtEnd: loadavg(),
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
      },
      settings: {
        durationSec: DURATION,
        warmupSec: WARMUP,
        connections: CONNECTIONS,
        seededUsers: USERS,
        rounds: ROUNDS,
        threadPoolSize: THREAD_POOL,
        database: "sqlite (WAL, temp file)",
        sessionCacheTtlMs: server.info.sessionCacheTtlMs ?? null,
        rateLimit: false,
      },
      units: {
        rate: "per second",
        latency: "ms",
        cpuMicrosPerReq: "µs of server CPU per request (user+system, all threads)",
        loopCpuMicrosPerReq: "µs of the server's main-thread CPU per request (Linux /proc, 10 ms ticks)",
      },
      targets: {
        getSessionVsBareHttp: {
          target: TARGETS.getSession, ratio: results.getSession.ratio, cpuRatio: results.getSession.cpuRatio,
          met: results.getSession.ratio >= TARGETS.getSession,
        },
        signInVsArgon2Verify: {
          target: TARGETS.signIn, ratio: results.signInEmail.ratio, cpuRatio: results.signInEmail.cpuRatio,
          met: results.signInEmail.ratio >= TARGETS.signIn,
        },
      },
      results,
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
