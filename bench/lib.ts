/**
 * The bench's parts: server children (forked with tsx, each its own process), autocannon runs
 * with server CPU per request, baselines, medians. bench/run.ts puts them together.
 */
import autocannon, { type Options, type Result } from "autocannon";
import { execFileSync, fork, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { createHistogram } from "node:perf_hooks";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { CpuSample } from "./probe.ts";

export const here = dirname(fileURLToPath(import.meta.url));
export const root = join(here, "..");

export const num = (name: string, fallback: number) => {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < 0) throw new Error(`${name} must be a non-negative number, got ${raw}`);
  return v;
};
export const DURATION = num("BENCH_DURATION", 10);
export const WARMUP = num("BENCH_WARMUP", 1);
export const CONNECTIONS = num("BENCH_CONNECTIONS", 10);
export const USERS = num("BENCH_USERS", 2000);
export const ROUNDS = Math.max(1, num("BENCH_ROUNDS", 1));
/**
 * Requests of each hashing endpoint (sign-in, sign-up) sent before the first round. At ~200
 * requests/s V8 is still optimizing their code for thousands of requests: with --trace-opt, 113
 * functions were optimized (412 ms of TurboFan on the helper threads) inside an 8 s sign-in run
 * that followed a 2 s warm-up, and compiling stopped after ~4,000. A running service is past
 * that; a second-long warm-up measured the JIT instead (sign-up 0.85x against 0.93x once warm).
 */
export const JIT_WARMUP = num("BENCH_JIT_WARMUP", 4000);
/** libuv's pool in every child: as the CLI sizes it (bin/portcullis.cjs: one thread per core), or UV_THREADPOOL_SIZE. */
export const THREAD_POOL = Number(process.env.UV_THREADPOOL_SIZE) || availableParallelism();
/** BENCH_CPU_PROF=1: the Portcullis child writes a V8 .cpuprofile into PROFILE_DIR on exit. */
export const PROFILE = process.env.BENCH_CPU_PROF === "1";
export const PROFILE_DIR = join(tmpdir(), "portcullis-bench-profiles");


// ---------------------------------------------------------------------------------------------
// Child processes

export interface Child {
  proc: ChildProcess;
  info: Record<string, unknown> & { url: string };
  /** user + system CPU of the child (all its threads, and its main thread alone), microseconds. */
  cpu(): Promise<CpuSample>;
  stop(): Promise<void>;
}

/** The node flags `npm start` passes (package.json `scripts.start`): the bench runs servers as it does. */
export function startNodeFlags(): string[] {
  const start = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start.split(/\s+/);
  return start.slice(start.indexOf("node") + 1).filter((t) => t.startsWith("--"));
}

export function forkTs(file: string, env: Record<string, string>, profile = false): ChildProcess {
  return fork(join(here, file), [], {
    cwd: root,
    execArgv: [...startNodeFlags(), "--import", "tsx", ...(profile ? ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`] : [])],
    env: { ...process.env, UV_THREADPOOL_SIZE: String(THREAD_POOL), ...env },
    stdio: ["ignore", "pipe", "inherit", "ipc"],
  });
}

export function startServerChild(file: string, env: Record<string, string> = {}, profile = false): Promise<Child> {
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
export function runOnce<T>(file: string, env: Record<string, string>): Promise<T> {
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

export interface Measurement {
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

export async function measure(label: string, child: Child, opts: Options): Promise<Measurement> {
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

/** Sends `amount` requests (10 connections) and measures nothing: brings the JIT to its steady state. */
export async function warmUp(label: string, opts: Options, amount: number): Promise<void> {
  if (amount <= 0) return;
  process.stderr.write(`  JIT warm-up, ${label}: ${amount} requests ...`);
  const started = performance.now();
  const r = await autocannon({ ...opts, connections: CONNECTIONS, amount });
  process.stderr.write(` ${((performance.now() - started) / 1000).toFixed(1)} s${r.non2xx ? ` (${r.non2xx} non-2xx)` : ""}\n`);
}

export interface ArgonResult {
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

export async function measureArgon2(op: "verify" | "hash"): Promise<Measurement & { concurrency: number; options: Record<string, number> }> {
  process.stderr.write(`  argon2 ${op}: ${WARMUP ? `${WARMUP} s warm-up + ` : ""}${DURATION} s ...`);
  const r = await runOnce<ArgonResult>("argon2.ts", { BENCH_DURATION: String(DURATION), BENCH_WARMUP: String(WARMUP), BENCH_ARGON2_OP: op });
  process.stderr.write(` ${r.opsPerSec.toFixed(1)} ${op === "hash" ? "hashes" : "verifies"}/s (${r.concurrency} in flight)\n`);
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

export const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

export function combine<M extends Measurement>(runs: M[]): M & { rounds: Measurement[] } {
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

export async function expectOk(res: Response, what: string): Promise<string> {
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${what}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return text;
}

export function gitDescribe(): string | null {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: root, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src", "rest-bridge"], { cwd: root, encoding: "utf8" }).trim();
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return null;
  }
}
