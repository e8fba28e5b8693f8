import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, killAll, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * Issue 14 lever 5, "thread pool sized to the cores": the CLI (bin/portcullis.cjs) sizes libuv's
 * pool, where password hashes run, to one thread per core before node first uses it (libuv's
 * default is 4 on any machine); an operator's UV_THREADPOOL_SIZE wins; `serve --workers N`
 * gives each worker its share of the cores. Checked on real CLI processes: thread counts, the
 * workers' environment, and GET /metrics during a sign-up flood. Log lines never queue behind
 * the hashes (src/logger.ts: pino's default destination wrote through that pool).
 */

const CORES = availableParallelism();
const threads = (pid: number) => readdirSync(`/proc/${pid}/task`).length;
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
    config = configFile({ rateLimit: { enabled: false }, logLevel: "warn", metrics: { enabled: true } });
    infoConfig = configFile({ rateLimit: { enabled: false }, logLevel: "info", metrics: { enabled: true } });
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
    const session = await fetch(`${server.auth}/get-session`, { headers: { authorization: `Bearer ${String(up.body.token)}`, "x-request-id": requestId } });
    expect(session.status).toBe(200);
    while (!server.output().includes(`"requestId":"${requestId}"`) && answered < size) await new Promise((r) => setTimeout(r, 1));
    // Written through the pool, the line waited for every hash queued before it: most of the flood
    // had answered by then. Written by the event loop, it is out before the flood is half done.
    const answeredAtLine = answered;
    expect(server.output()).toContain(`"requestId":"${requestId}"`);
    expect(answeredAtLine).toBeLessThan(size / 2);
    expect((await Promise.all(flood)).map((r) => r.status)).toEqual(Array(size).fill(200));
  }, 120_000);

  it("serve --workers 2 gives each worker half the cores (at least one thread)", async () => {
    const cluster = await start({ PORTCULLIS_WORKERS: "2" });
    const workers = execFileSync("ps", ["--ppid", String(cluster.child.pid), "-o", "pid="], { encoding: "utf8" }).trim().split("\n").map(Number);
    expect(workers).toHaveLength(2);
    for (const pid of workers) expect(envOf(pid).UV_THREADPOOL_SIZE).toBe(String(Math.max(1, Math.floor(CORES / 2))));
  }, 120_000);
});
