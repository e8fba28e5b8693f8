/**
 * Scale-out rows, each behind its flag (bench/run.ts):
 *
 *   BENCH_WORKERS=N   get-session (Bearer) against `serve --workers N` vs one process, same run,
 *                     the compiled service as `npm start` runs it (SQLite, rate limits off).
 *                     Target 0.8·N: on a machine where the load generator needs a core of its
 *                     own, N workers cannot reach it (PERFORMANCE.md point 5); give it N+1 cores.
 *   BENCH_MULTI=1     three instances on one PostgreSQL (BENCH_PG_URL, default the test
 *                     database's server), each caching sessions for 60 s: a session revoked on
 *                     one, asked for on the other two right after the writer's answer; stale
 *                     answers and the time until refused (p50, p99).
 */
import autocannon from "autocannon";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
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

async function getSessionRate(s: Started, token: string): Promise<number> {
  const opts = { url: `${s.url}/api/auth/get-session`, headers: { authorization: `Bearer ${token}` }, connections: CONNECTIONS };
  await autocannon({ ...opts, duration: 1 });
  const r = await autocannon({ ...opts, duration: DURATION });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`get-session: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r.requests.total / r.duration;
}

export async function measureWorkers(workers: number): Promise<{ one: number; many: number; ratio: number }> {
  const dir = mkdtempSync(join(tmpdir(), "portcullis-workers-"));
  writeFileSync(join(dir, "config.mjs"), "export default { rateLimit: { enabled: false }, logLevel: 'warn' };\n");
  try {
    process.stderr.write(`  workers: one process, then ${workers} workers ...`);
    const single = await start(dir, SECRET);
    const token = await signUp(single.url);
    const one = await getSessionRate(single, token);
    await stop(single.proc);
    const cluster = await start(dir, { ...SECRET, PORTCULLIS_WORKERS: String(workers) });
    const many = await getSessionRate(cluster, token);
    await stop(cluster.proc);
    process.stderr.write(` ${one.toFixed(0)} vs ${many.toFixed(0)} req/s\n`);
    return { one, many, ratio: many / one };
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
