/**
 * get-session latency beside a sign-in flood, on the compiled service as `npm start` runs it:
 * 10 connections of sign-ins keep every thread of the hash pool busy while one connection asks
 * get-session 500 times a second. Twice: the pool's threads 10 nice levels below the event loop
 * (the CLI's default, bin/pool-priority.cjs), then level with it (PORTCULLIS_HASH_NICE=0).
 */
import autocannon from "autocannon";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createHistogram } from "node:perf_hooks";
import { start, stop } from "./footprint.ts";
import { CONNECTIONS } from "./lib.ts";

export interface BesideFlood {
  p50: number;
  p99: number;
  signInsPerSec: number;
}

async function besideFlood(dir: string, env: Record<string, string>, seconds: number): Promise<BesideFlood> {
  const { proc, url } = await start(dir, env);
  try {
    const headers = { "content-type": "application/json", origin: url };
    const credentials = { email: `flood.${Date.now()}@example.com`, password: "flood-password-1" };
    const up = await fetch(`${url}/api/auth/sign-up/email`, { method: "POST", headers, body: JSON.stringify({ ...credentials, name: "Flood" }) });
    const { token } = (await up.json()) as { token: string };
    const signIns = { url: `${url}/api/auth/sign-in/email`, method: "POST" as const, headers, body: JSON.stringify(credentials), connections: CONNECTIONS };
    await autocannon({ ...signIns, duration: 3 });
    const flood = autocannon({ ...signIns, duration: seconds + 1 });
    await new Promise((r) => setTimeout(r, 500));
    const hist = createHistogram();
    const probe = autocannon({ url: `${url}/api/auth/get-session`, headers: { authorization: `Bearer ${token}` }, connections: 1, overallRate: 500, duration: seconds });
    probe.on("response", (_c: unknown, status: number, _b: number, ms: number) => {
      if (status === 200) hist.record(Math.max(1, Math.round(ms * 1e6)));
    });
    const [f] = await Promise.all([flood, probe]);
    return { p50: hist.percentile(50) / 1e6, p99: hist.percentile(99) / 1e6, signInsPerSec: f.requests.total / f.duration };
  } finally {
    await stop(proc);
  }
}

export async function measureBesideFlood(seconds = 8): Promise<{ lowered: BesideFlood; level: BesideFlood }> {
  const dir = mkdtempSync(join(tmpdir(), "portcullis-flood-"));
  writeFileSync(join(dir, "config.mjs"), "export default { rateLimit: { enabled: false } };\n");
  const env = { AUTH_SECRET: "bench-secret-bench-secret-bench-secret-0123456789" };
  try {
    process.stderr.write("  get-session beside a sign-in flood: pool below the event loop, then level ...");
    const lowered = await besideFlood(dir, env, seconds);
    const level = await besideFlood(dir, { ...env, PORTCULLIS_HASH_NICE: "0" }, seconds);
    process.stderr.write(` p99 ${lowered.p99.toFixed(2)} vs ${level.p99.toFixed(2)} ms\n`);
    return { lowered, level };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
