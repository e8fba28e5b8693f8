/**
 * The compiled service as `npm start` runs it (its node flags, `bin/portcullis.cjs serve`, default
 * config but rate limits off so the load is answered): start to first answer, resident memory
 * idle, and resident memory after BENCH_LOAD_SEC (default 60) of get-session and sign-in load.
 */
import autocannon from "autocannon";
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CONNECTIONS, median, root, startNodeFlags } from "./lib.ts";

export interface Footprint {
  /** Fresh database: migrations run first. */
  firstStartMs: number;
  /** Median of restarts on the migrated database. */
  startMs: number;
  idleRssMiB: number;
  loadRssMiB: number;
  peakRssMiB: number;
  loadSec: number;
  loadRequests: number;
  /** The same start, polled the same way, of a bare node:http server (no modules): this machine's floor. */
  bareStartMs: number;
}

/** VmRSS of one process, MiB (the bin runs the service in its own process: no loader child). */
export function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export interface Started {
  proc: ChildProcess;
  url: string;
  ms: number;
}

/** Spawns the compiled CLI and polls until it is ready (migrated, serving); ms from spawn to that answer. */
export async function start(dir: string, env: Record<string, string>): Promise<Started> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...startNodeFlags(), join(root, "bin/portcullis.cjs"), "serve", "--config", join(dir, "config.mjs")], {
    cwd: dir,
    env: { ...process.env, NODE_ENV: "development", PORT: String(port), HOST: "127.0.0.1", PUBLIC_URL: url, DATABASE_URL: `sqlite:${join(dir, "fp.db")}`, ...env },
    stdio: ["ignore", "ignore", "inherit"],
  });
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`portcullis serve exited with ${proc.exitCode}`);
    try {
      const res = await fetch(`${url}/api/auth/ready`); // /ok answers 200 while start-up migrations run
      if (res.ok) return { proc, url, ms: performance.now() - t0 };
    } catch {
      // not listening yet
    }
    if (performance.now() - t0 > 60_000) throw new Error("portcullis serve: no answer after 60 s");
    await sleep(5);
  }
}

const BARE_SERVER = `require("node:http").createServer((q, s) => s.end("{}")).listen(Number(process.env.PORT), "127.0.0.1")`;

/** A bare node:http server spawned with the service's node flags, polled until it answers: ms. */
async function bareStart(): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const proc = spawn(process.execPath, [...startNodeFlags(), "-e", BARE_SERVER], { env: { ...process.env, PORT: String(port) }, stdio: "ignore" });
  try {
    for (;;) {
      if (proc.exitCode !== null) throw new Error(`bare server exited with ${proc.exitCode}`);
      try {
        if ((await fetch(`http://127.0.0.1:${port}/`)).ok) return performance.now() - t0;
      } catch {
        // not listening yet
      }
      await sleep(5);
    }
  } finally {
    await stop(proc);
  }
}

export async function stop(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null) return;
  const exited = new Promise((r) => proc.once("exit", r));
  proc.kill("SIGTERM");
  await exited;
}

export async function measureFootprint(loadSec: number, restarts = 3): Promise<Footprint> {
  execFileSync(process.execPath, [join(root, "scripts/build.mjs"), "--if-stale"], { stdio: "inherit" });
  const dir = mkdtempSync(join(tmpdir(), "portcullis-footprint-"));
  writeFileSync(join(dir, "config.mjs"), "export default { rateLimit: { enabled: false } };\n");
  const env = { AUTH_SECRET: "bench-secret-bench-secret-bench-secret-0123456789" };
  try {
    process.stderr.write("  footprint: first start (fresh database) ...");
    const first = await start(dir, env);
    await stop(first.proc);
    const starts: number[] = [];
    let last: Started | undefined;
    for (let i = 0; i < restarts; i++) {
      if (last) await stop(last.proc);
      last = await start(dir, env);
      starts.push(last.ms);
    }
    const { proc, url } = last!;
    const bareStarts: number[] = [];
    for (let i = 0; i < restarts; i++) bareStarts.push(await bareStart());
    process.stderr.write(` ${first.ms.toFixed(0)} ms; restarts ${starts.map((s) => s.toFixed(0)).join(", ")} ms; bare node:http ${bareStarts.map((s) => s.toFixed(0)).join(", ")} ms\n`);
    await sleep(2000);
    const idleRssMiB = rssMiB(proc.pid!);
    const origin = { "content-type": "application/json", origin: url };
    const credentials = { email: "footprint@example.com", password: "footprint-password-1" };
    const signUp = await fetch(`${url}/api/auth/sign-up/email`, { method: "POST", headers: origin, body: JSON.stringify({ ...credentials, name: "Footprint" }) });
    const { token } = (await signUp.json()) as { token: string };
    process.stderr.write(`  footprint: ${loadSec} s of load (get-session, 1 sign-in in 50) ...`);
    let peakRssMiB = rssMiB(proc.pid!);
    const sampler = setInterval(() => (peakRssMiB = Math.max(peakRssMiB, rssMiB(proc.pid!))), 500);
    const run = autocannon({
      url,
      connections: CONNECTIONS,
      duration: loadSec,
      requests: Array.from({ length: 50 }, (_, i) =>
        i === 0
          ? { method: "POST" as const, path: "/api/auth/sign-in/email", headers: origin, body: JSON.stringify(credentials) }
          : { method: "GET" as const, path: "/api/auth/get-session", headers: { authorization: `Bearer ${token}` } },
      ),
    });
    const result = await run;
    clearInterval(sampler);
    const loadRssMiB = rssMiB(proc.pid!);
    peakRssMiB = Math.max(peakRssMiB, loadRssMiB);
    process.stderr.write(` ${result.requests.total} requests, RSS ${loadRssMiB.toFixed(0)} MiB\n`);
    await stop(proc);
    return { firstStartMs: first.ms, startMs: median(starts), idleRssMiB, loadRssMiB, peakRssMiB, loadSec, loadRequests: result.requests.total, bareStartMs: median(bareStarts) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
