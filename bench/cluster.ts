/**
 * Scale-out rows, each behind its flag (bench/run.ts):
 *
 *   BENCH_WORKERS=N   get-session (Bearer) against `serve --workers N` vs one process, same run,
 *                     the compiled service as `npm start` runs it (SQLite, rate limits off):
 *                     the measured throughput ratio, and the one N free cores would give,
 *                     N × (CPU per request of one process / of the cluster, primary included),
 *                     with each worker offered the load the one process was (a fifth of its
 *                     saturated rate; both saturated as a reference). Target 0.8·N. Where the
 *                     load generator shares the N cores (a 2-core machine), only the projection
 *                     can be shown (the generator's core is then one the cluster lacks).
 *   BENCH_MULTI=1     three instances on one PostgreSQL (BENCH_PG_URL, default the test
 *                     database's server), each caching sessions for 60 s: a session revoked on
 *                     one, asked for on the other two right after the writer's answer; stale
 *                     answers and the time until refused (p50, p99).
 */
import autocannon from "autocannon";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { start, stop, type Started } from "./footprint.ts";
import { CONNECTIONS, DURATION } from "./lib.ts";

const SECRET = { AUTH_SECRET: "bench-secret-bench-secret-bench-secret-0123456789" };

async function signUp(url: string): Promise<string> {
  const res = await fetch(`${url}/api/auth/sign-up/email`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: url },
    body: JSON.stringify({ name: "Cluster", email: `c.${Date.now().toString(36)}.${Math.random().toString(36).slice(2)}@example.com`, password: "cluster-password-1" }),
  });
  if (res.status !== 200) throw new Error(`sign-up: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

/** user + system CPU of a process and its children (the cluster's primary and workers), µs; Linux /proc, 10 ms ticks. */
function treeCpuMicros(pid: number): number {
  let listed = "";
  try {
    listed = execFileSync("ps", ["--ppid", String(pid), "-o", "pid="], { encoding: "utf8" });
  } catch {
    // ps exits 1 when the process has no children
  }
  const children = listed.split("\n").map((l) => Number(l.trim())).filter((n) => n > 0);
  return [pid, ...children].reduce((sum, p) => {
    const stat = readFileSync(`/proc/${p}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return sum + ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  }, 0);
}

async function getSessionRate(s: Started, token: string, load: { connections: number; overallRate?: number } = { connections: CONNECTIONS }): Promise<{ rate: number; cpuPerReq: number }> {
  const opts = { url: `${s.url}/api/auth/get-session`, headers: { authorization: `Bearer ${token}` }, ...load };
  await autocannon({ ...opts, duration: 1 });
  const cpu0 = treeCpuMicros(s.proc.pid!);
  const r = await autocannon({ ...opts, duration: DURATION });
  const cpu = treeCpuMicros(s.proc.pid!) - cpu0;
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`get-session: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return { rate: r.requests.total / r.duration, cpuPerReq: cpu / r.requests.total };
}

export interface WorkersResult {
  one: number;
  many: number;
  /** Measured throughput, N workers / one process (the load generator shares the cores). */
  ratio: number;
  /** CPU per request, one process / N workers (primary included), both saturated. */
  efficiency: number;
  /** N × efficiency. Saturated, N workers and the load generator are N + 1 busy processes on N cores: their switching is charged to the cluster. */
  projected: number;
  /** Requests/s each process was offered in the equal-load runs (a fifth of one process's saturated rate). */
  perProcessRate: number;
  /** CPU per request, one process at that rate / N workers at N times it (each worker at that rate). */
  equalLoadEfficiency: number;
  /** N × equalLoadEfficiency: the throughput ratio on N cores free for the service. */
  equalLoadProjected: number;
}

export async function measureWorkers(workers: number): Promise<WorkersResult> {
  const dir = mkdtempSync(join(tmpdir(), "portcullis-workers-"));
  writeFileSync(join(dir, "config.mjs"), "export default { rateLimit: { enabled: false }, logLevel: 'warn' };\n");
  try {
    process.stderr.write(`  workers: one process, then ${workers} workers ...`);
    const single = await start(dir, SECRET);
    let token: string;
    let one: Awaited<ReturnType<typeof getSessionRate>>;
    let oneAtRate: Awaited<ReturnType<typeof getSessionRate>>;
    let perProcessRate: number;
    try {
      token = await signUp(single.url);
      one = await getSessionRate(single, token);
      // Equal load per process: each worker then works at the rate the one process did, as on
      // N free cores; nobody is saturated, so the load generator's share of the cores is not
      // charged to either side.
      perProcessRate = Math.round(one.rate / 5 / 1000) * 1000;
      oneAtRate = await getSessionRate(single, token, { connections: CONNECTIONS, overallRate: perProcessRate });
    } finally {
      await stop(single.proc);
    }
    const cluster = await start(dir, { ...SECRET, PORTCULLIS_WORKERS: String(workers) });
    let many: Awaited<ReturnType<typeof getSessionRate>>;
    let manyAtRate: Awaited<ReturnType<typeof getSessionRate>>;
    try {
      many = await getSessionRate(cluster, token);
      manyAtRate = await getSessionRate(cluster, token, { connections: workers * CONNECTIONS, overallRate: workers * perProcessRate });
    } finally {
      await stop(cluster.proc);
    }
    const efficiency = one.cpuPerReq / many.cpuPerReq;
    const equalLoadEfficiency = oneAtRate.cpuPerReq / manyAtRate.cpuPerReq;
    process.stderr.write(
      ` ${one.rate.toFixed(0)} vs ${many.rate.toFixed(0)} req/s; CPU ${one.cpuPerReq.toFixed(1)} vs ${many.cpuPerReq.toFixed(1)} µs/req; ` +
        `at ${perProcessRate} req/s per process ${oneAtRate.cpuPerReq.toFixed(1)} vs ${manyAtRate.cpuPerReq.toFixed(1)} µs/req\n`,
    );
    return {
      one: one.rate, many: many.rate, ratio: many.rate / one.rate, efficiency, projected: workers * efficiency,
      perProcessRate, equalLoadEfficiency, equalLoadProjected: workers * equalLoadEfficiency,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const percentile = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil((p / 100) * xs.length) - 1)]!;

export async function measureMultiInstance(rounds = 50): Promise<{ stale: number; p50: number; p99: number; revokes: number }> {
  const admin = process.env.BENCH_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
  const name = `portcullis_bench_multi_${process.pid}`;
  const client = new pg.Client({ connectionString: admin });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  const dbUrl = new URL(admin);
  dbUrl.pathname = `/${name}`;
  const dir = mkdtempSync(join(tmpdir(), "portcullis-multi-"));
  writeFileSync(join(dir, "config.mjs"), "export default { rateLimit: { enabled: false }, logLevel: 'warn', session: { cacheTtlMs: 60000 } };\n");
  const servers: Started[] = [];
  try {
    process.stderr.write(`  multi-instance: 3 instances on one PostgreSQL, ${rounds} revocations ...`);
    for (let i = 0; i < 3; i++) servers.push(await start(dir, { ...SECRET, DATABASE_URL: dbUrl.href }));
    const [a, ...readers] = servers as [Started, Started, Started];
    const alive = async (s: Started, token: string) =>
      (await (await fetch(`${s.url}/api/auth/get-session`, { headers: { authorization: `Bearer ${token}` } })).text()) !== "null";
    let stale = 0;
    const seen: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const token = await signUp(a.url);
      for (const s of readers) if (!(await alive(s, token))) throw new Error("not signed in on a reader");
      const out = await fetch(`${a.url}/api/auth/sign-out`, { method: "POST", headers: { authorization: `Bearer ${token}` } });
      if (out.status !== 200) throw new Error(`sign-out: ${out.status}`);
      const t0 = performance.now();
      for (const s of readers) {
        if (await alive(s, token)) {
          stale++;
          while (await alive(s, token)) await new Promise((r) => setTimeout(r, 1));
        }
        seen.push(performance.now() - t0);
      }
    }
    process.stderr.write(` ${stale} stale\n`);
    return { stale, p50: percentile(seen, 50), p99: percentile(seen, 99), revokes: rounds };
  } finally {
    await Promise.all(servers.map((s) => stop(s.proc)));
    rmSync(dir, { recursive: true, force: true });
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.end();
  }
}
