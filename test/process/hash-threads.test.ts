import { readdirSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, killAll, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * Issue 14 lever 5, "thread pool sized to the cores": the CLI (bin/portcullis.cjs) sizes libuv's
 * pool before node first uses it, one thread per password-hash slot and one to spare (at least
 * libuv's 4), and src/crypto/password.ts keeps at most PORTCULLIS_HASH_THREADS hashes running,
 * the rest waiting for a slot. Checked on the real CLI process: its thread count, and GET
 * /metrics during a sign-up flood.
 */

const threads = (server: ServerProcess) => readdirSync(`/proc/${server.child.pid}/task`).length;

async function hashGauge(server: ServerProcess): Promise<{ running: number; waiting: number }> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  const read = (state: string) => Number(new RegExp(`^portcullis_password_hashes\\{state="${state}"\\} (\\d+)$`, "m").exec(text)?.[1] ?? Number.NaN);
  return { running: read("running"), waiting: read("waiting") };
}

describe(`password hashes on the CLI's thread pool (${testDialect})`, () => {
  let db: TestDatabase;
  let config: ReturnType<typeof configFile>;
  const started: ServerProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    config = configFile({ rateLimit: { enabled: false }, logLevel: "warn", metrics: { enabled: true } });
  });
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    killAll();
    config?.remove();
    await db?.drop();
  }, 30_000);

  const start = async (env: Record<string, string>) => {
    const server = await startServerProcess({ databaseUrl: db.url, config: config.path, env: { UV_THREADPOOL_SIZE: "", ...env } });
    started.push(server);
    return server;
  };
  let seq = 0;
  const signUp = (server: ServerProcess) =>
    postJson(`${server.auth}/sign-up/email`, { name: "Pool", email: `pool.${process.pid}.${seq++}@example.test`, password: "pool-password-1" });

  it("sizes the pool from PORTCULLIS_HASH_THREADS (+1, at least 4) and runs at most that many hashes at once", async () => {
    const one = await start({ PORTCULLIS_HASH_THREADS: "1" });
    const nine = await start({ PORTCULLIS_HASH_THREADS: "9" });
    // The pool's threads start with its first job: a sign-up (its hash) in each.
    for (const s of [one, nine]) expect((await signUp(s)).status).toBe(200);
    // 1 slot: libuv's 4 threads; 9 slots: 10. Everything else in the two processes is the same.
    expect(threads(nine) - threads(one)).toBe(6);

    // A flood on the one-slot process: one hash runs, the others wait their turn, and all finish.
    const flood = Array.from({ length: 8 }, () => signUp(one));
    let seen = { running: 0, waiting: 0 };
    for (let i = 0; i < 100 && seen.waiting === 0; i++) seen = await hashGauge(one);
    expect(seen.running).toBe(1);
    expect(seen.waiting).toBeGreaterThan(0);
    expect((await Promise.all(flood)).map((r) => r.status)).toEqual(Array(8).fill(200));
    expect(await hashGauge(one)).toEqual({ running: 0, waiting: 0 });
  }, 120_000);
});
