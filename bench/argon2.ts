/**
 * Baseline: raw argon2id verifies (or hashes: BENCH_ARGON2_OP=hash) per second with the server's parameters, in its own process.
 * Keeps BENCH_ARGON2_CONCURRENCY verifies in flight (default: the thread pool's size, one per core
 * as the CLI sizes it; bench/lib.ts gives this process and the servers the same) for
 * BENCH_DURATION seconds, then prints one JSON line.
 */
import { hash, verify } from "@node-rs/argon2";
import { mainThreadCpuMicros } from "./probe.ts";

// Same as src/crypto/password.ts: algorithm 2 = Argon2id (a const enum that isolatedModules rejects).
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;
const PASSWORD = "bench-password-123";

const durationSec = Number(process.env.BENCH_DURATION ?? 10);
const threadPoolSize = Number(process.env.UV_THREADPOOL_SIZE) || 4;
const concurrency = Number(process.env.BENCH_ARGON2_CONCURRENCY) || threadPoolSize;
const warmupSec = Number(process.env.BENCH_WARMUP ?? 1);
/** BENCH_ARGON2_OP=hash: hashes (a fresh salt each, as sign-up does) instead of verifies. */
const OP = process.env.BENCH_ARGON2_OP === "hash" ? "hash" : "verify";

const encoded = await hash(PASSWORD, OPTIONS);

async function run(seconds: number, latencies: number[] | null): Promise<number> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now();
      if (OP === "hash") await hash(PASSWORD, OPTIONS);
      else if (!(await verify(encoded, PASSWORD))) throw new Error("argon2 verify returned false");
      latencies?.push(performance.now() - t0);
      done++;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return done;
}

if (warmupSec > 0) await run(warmupSec, null);
const latencies: number[] = [];
const cpu0 = process.cpuUsage();
const loop0 = mainThreadCpuMicros();
const t0 = performance.now();
const ops = await run(durationSec, latencies);
const elapsedSec = (performance.now() - t0) / 1000;
const cpu = process.cpuUsage(cpu0);
const loop1 = mainThreadCpuMicros();
latencies.sort((a, b) => a - b);
const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))] ?? 0;
process.stdout.write(
  `${JSON.stringify({
    opsPerSec: ops / elapsedSec,
    ops,
    elapsedSec,
    concurrency,
    threadPoolSize,
    p50: pct(50),
    p99: pct(99),
    cpuMicrosPerOp: (cpu.user + cpu.system) / ops,
    loopCpuMicrosPerOp: loop0 !== null && loop1 !== null ? (loop1 - loop0) / ops : null,
    options: OPTIONS,
  })}\n`,
);
