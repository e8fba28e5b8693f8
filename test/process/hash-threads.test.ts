import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, killAll, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * "thread pool sized to the cores": the CLI (bin/portcullis.cjs) sizes libuv's
 * pool, where password hashes run, to one thread per core before node first uses it (libuv's
 * default is 4 on any machine); an operator's UV_THREADPOOL_SIZE wins; `serve --workers N`
 * gives each worker its share of the cores. Checked on real CLI processes: thread counts, the
 * workers' environment, and GET /metrics during a sign-up flood. Log lines never queue behind
 * the hashes (src/logger.ts: pino's default destination wrote through that pool). The pool's
 * threads run 10 nice levels below the event loop (bin/pool-priority.cjs), so that a request
 * does not wait for the scheduler behind them.
 */

const CORES = availableParallelism();
const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;
/** Each thread of a process: its nice value and CPU time so far (user + system, clock ticks). */
const taskStats = (pid: number) =>
  Object.fromEntries(readdirSync(`/proc/${pid}/task`).map((tid) => {
    const fields = readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ");
    // stat(5), counted from the state field (3): utime 14, stime 15, nice 19.
    return [tid, { nice: Number(fields[16]), ticks: Number(fields[11]) + Number(fields[12]) }];
  }));
const envOf = (pid: number) => Object.fromEntries(readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));

async function inFlight(server: ServerProcess): Promise<number> {
  const text = await (await fetch(`${server.url}/metrics`)).text();
  return Number(/^portcullis_password_hashes_in_flight (\d+)$/m.exec(text)?.[1] ?? Number.NaN);
}

describe(`password hashes on the CLI's thread pool (${testDialect})`, () => {
  let db: TestDatabase;
  let config: ReturnType<typeof configFile>;
  let infoConfig: ReturnType<typeof configFile>;
  const started: ServerProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    config = configFile({ rateLimit: { enabled: false }, logLevel: "warn", metrics: { enabled: true, public: true } });
    infoConfig = configFile({ rateLimit: { enabled: false }, logLevel: "info", metrics: { enabled: true, public: true } });
  });
  afterAll(async () => {
    await Promise.all(started.map((s) => s.stop()));
    killAll();
    config?.remove();
    infoConfig?.remove();
    await db?.drop();
  }, 30_000);

  // The test runner's own UV_THREADPOOL_SIZE (if any) must not reach the servers unless given.
  const start = async (env: Record<string, string>, configPath = config.path) => {
    const server = await startServerProcess({ databaseUrl: db.url, config: configPath, env: { UV_THREADPOOL_SIZE: "", ...env } });
    started.push(server);
    return server;
  };
  let seq = 0;
  const signUp = (server: ServerProcess) =>
    postJson(`${server.auth}/sign-up/email`, { name: "Pool", email: `pool.${process.pid}.${seq++}@example.test`, password: "pool-password-1" });

  it("one thread per core by default, the operator's UV_THREADPOOL_SIZE when set; a flood queues for it and drains", async () => {
    const auto = await start({});
    const given = await start({ UV_THREADPOOL_SIZE: String(CORES + 5) });
    // The pool's threads start with its first job: a sign-up (its hash) in each.
    for (const s of [auto, given]) expect((await signUp(s)).status).toBe(200);
    // Everything else in the two processes is the same: the difference is the pool, so auto's is
    // CORES threads. (/proc/<pid>/environ shows the environment at exec, before the CLI set it.)
    expect(threads(given.child.pid!) - threads(auto.child.pid!)).toBe(5);

    expect(await inFlight(auto)).toBe(0); // the first scrape loads the metrics code (~70 ms): not during the flood
    const flood = Array.from({ length: 6 * CORES }, () => signUp(auto));
    let seen = 0;
    for (let i = 0; i < 200 && seen <= CORES; i++) seen = Math.max(seen, await inFlight(auto));
    expect(seen).toBeGreaterThan(CORES); // more asked for than threads: the rest wait in libuv's queue
    expect((await Promise.all(flood)).map((r) => r.status)).toEqual(Array(6 * CORES).fill(200));
    expect(await inFlight(auto)).toBe(0);
  }, 120_000);

  it("a request's log line is written while a sign-up flood still holds every thread of the pool", async () => {
    const server = await start({}, infoConfig.path);
    const up = await signUp(server);
    expect(up.status).toBe(200);
    expect(await inFlight(server)).toBe(0);
    const size = 20 * CORES;
    let answered = 0;
    const flood = Array.from({ length: size }, () => signUp(server).then((r) => (answered++, r)));
    let seen = 0;
    for (let i = 0; i < 200 && seen <= CORES; i++) seen = Math.max(seen, await inFlight(server));
    expect(seen).toBeGreaterThan(CORES); // hashes queued for the pool behind the running ones
    const requestId = `log-while-hashing-${process.pid}`;
    // A request that needs neither a hash nor the database: on PostgreSQL a get-session waits for
    // a pool connection behind the flood's inserts, which says nothing about where logs are written.
    const probe = await fetch(`${server.auth}/no-such-route`, { headers: { "x-request-id": requestId } });
    expect(probe.status).toBe(404);
    // The line is written before the answer; its pipe may be read a moment after the answer.
    const deadline = Date.now() + 10_000;
    while (!server.output().includes(`"requestId":"${requestId}"`) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 1));
    // Written through the pool, the line waited for every hash queued before it: most of the flood
    // had answered by then. Written by the event loop, it is out before the flood is half done.
    const answeredAtLine = answered;
    expect(server.output()).toContain(`"requestId":"${requestId}"`);
    expect(answeredAtLine).toBeLessThan(size / 2);
    expect((await Promise.all(flood)).map((r) => r.status)).toEqual(Array(size).fill(200));
  }, 120_000);

  it("the pool's threads run 10 nice levels below the event loop, and they are the ones hashing; PORTCULLIS_HASH_NICE=0 keeps them level", async () => {
    const server = await start({});
    const pid = server.child.pid!;
    // A fresh process's first sign-ups are V8's busiest (compiling them on its helper threads):
    // past them, what the threads spend is the hashing.
    expect((await Promise.all(Array.from({ length: 2 * CORES }, () => signUp(server)))).map((r) => r.status)).toEqual(Array(2 * CORES).fill(200));
    const before = taskStats(pid);
    expect(before[String(pid)]!.nice).toBe(0);
    const lowered = Object.keys(before).filter((tid) => before[tid]!.nice === 10);
    expect(lowered).toHaveLength(CORES);
    expect(Object.values(before).filter((t) => t.nice !== 0 && t.nice !== 10)).toEqual([]);

    const size = 16 * CORES;
    expect((await Promise.all(Array.from({ length: size }, () => signUp(server)))).map((r) => r.status)).toEqual(Array(size).fill(200));
    const after = taskStats(pid);
    const spent = (tids: string[]) => tids.reduce((sum, tid) => sum + (after[tid]?.ticks ?? 0) - (before[tid]?.ticks ?? 0), 0);
    const others = Object.keys(after).filter((tid) => tid !== String(pid) && !lowered.includes(tid));
    // ~10 ms of a core per hash: the lowered threads did the hashing, the other helpers little.
    expect(spent(lowered)).toBeGreaterThanOrEqual(size / 2);
    expect(spent(lowered)).toBeGreaterThan(4 * spent(others));

    const level = await start({ PORTCULLIS_HASH_NICE: "0" });
    expect(Object.values(taskStats(level.child.pid!)).map((t) => t.nice)).toEqual(Array(threads(level.child.pid!)).fill(0));
  }, 120_000);

  it("a PORTCULLIS_HASH_NICE that is not 0 to 19 stops the start with a message", async () => {
    await expect(start({ PORTCULLIS_HASH_NICE: "-5" })).rejects.toThrow(/PORTCULLIS_HASH_NICE must be a whole number from 0 to 19, got "-5"/);
  }, 60_000);

  it("serve --workers 2 gives each worker half the cores (at least one thread)", async () => {
    const cluster = await start({ PORTCULLIS_WORKERS: "2" });
    const workers = execFileSync("ps", ["--ppid", String(cluster.child.pid), "-o", "pid="], { encoding: "utf8" }).trim().split("\n").map(Number);
    expect(workers).toHaveLength(2);
    for (const pid of workers) {
      expect(envOf(pid).UV_THREADPOOL_SIZE).toBe(String(Math.max(1, Math.floor(CORES / 2))));
      // Each worker's pool yields to its event loop too (the worker runs bin/portcullis.cjs again).
      expect(Object.values(taskStats(pid)).filter((t) => t.nice === 10)).toHaveLength(Math.max(1, Math.floor(CORES / 2)));
    }
  }, 120_000);
});
