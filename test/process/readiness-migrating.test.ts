import { request as httpRequest } from "node:http";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { freePort } from "./harness.ts";
import { CLI_SECRET, finish, killChildren, runCli, waitForStatus } from "./cli-run.ts";

/**
 * While `serve` applies its migrations at start, liveness answers 200 (an
 * orchestrator must not kill a process busy migrating) and readiness 503 (no traffic yet). The
 * migration is held in progress by holding the migration lock (db/migration-lock.ts) from here,
 * as another instance migrating the same database would.
 */

const databases: TestDatabase[] = [];
afterAll(async () => {
  killChildren();
  await Promise.all(databases.map((d) => d.drop()));
});

/** Takes the lock the migrator waits for; resolves to its release. */
async function holdMigrationLock(db: TestDatabase): Promise<() => Promise<void>> {
  if (testDialect === "sqlite") {
    const lock = new Database(`${db.url.slice("sqlite:".length)}.migrate-lock`);
    lock.pragma("journal_mode = delete");
    lock.exec("BEGIN EXCLUSIVE");
    return async () => {
      lock.exec("COMMIT");
      lock.close();
    };
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  await client.query("SELECT pg_advisory_lock($1::bigint)", ["7022083722453819506"]);
  return async () => {
    await client.query("SELECT pg_advisory_unlock($1::bigint)", ["7022083722453819506"]);
    await client.end();
  };
}

describe(`serve while its start-up migrations run (${testDialect})`, { timeout: 120_000 }, () => {
  it("/ok 200, /ready and every other route 503 with Retry-After; ready and serving once they are applied", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const release = await holdMigrationLock(db);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/api/auth`;
    const r = runCli(["serve"], { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET, PORT: String(port) });
    try {
      const ok = await waitForStatus(r, `${base}/ok`);
      expect(await ok.json()).toEqual({ ok: true });
      const ready = await fetch(`${base}/ready`);
      expect(ready.status).toBe(503);
      expect(ready.headers.get("retry-after")).toBe("5");
      expect(ready.headers.get("x-request-id")).toBeTruthy();
      expect(((await ready.json()) as { code: string }).code).toBe("NOT_READY");
      expect((await fetch(`${base}/ready`, { method: "HEAD" })).status).toBe(503);
      const signUp = await fetch(`${base}/sign-up/email`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "Early", email: "early@example.test", password: "early-password-1" }),
      });
      expect(signUp.status).toBe(503);
      // Still held a second later: the migrator really is waiting.
      await new Promise((w) => setTimeout(w, 1000));
      expect((await fetch(`${base}/ready`)).status).toBe(503);
    } finally {
      await release();
    }
    await waitForStatus(r, `${base}/ready`);
    const signUp = await fetch(`${base}/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Later", email: "later@example.test", password: "later-password-1" }),
    });
    expect(signUp.status).toBe(200);
    r.child.kill("SIGTERM");
    expect(await finish(r)).toEqual({ code: 0, signal: null });
    expect(r.stdout()).toContain('"msg":"migrations applied"');
  });
});

/** GET on a fresh connection: the status, or the error code (ECONNREFUSED when nothing listens). */
function probe(url: string): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { agent: false, headers: { connection: "close" }, timeout: 2000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "TIMEOUT" })));
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

/**
 * Polls /ok on fresh connections through a start whose migration is held pending, from its first
 * answer until the service is ready; resolves to what each probe met, with the time it was sent.
 */
async function pollThroughStart(env: Record<string, string>) {
  const db = await createTestDatabase();
  databases.push(db);
  const release = await holdMigrationLock(db);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/api/auth`;
  const r = runCli(["serve"], { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET, PORT: String(port), ...env });
  const seen: { at: number; answer: number | string }[] = [];
  let polling = true;
  const poller = (async () => {
    while (polling) {
      const at = performance.now();
      const answer = await probe(`${base}/ok`);
      if (seen.length > 0 || answer === 200) seen.push({ at, answer });
      await new Promise((w) => setTimeout(w, 5));
    }
  })();
  try {
    await waitForStatus(r, `${base}/ok`);
    await new Promise((w) => setTimeout(w, 300));
  } finally {
    await release();
  }
  await waitForStatus(r, `${base}/ready`);
  await new Promise((w) => setTimeout(w, 300));
  polling = false;
  await poller;
  r.child.kill("SIGTERM");
  expect(await finish(r)).toEqual({ code: 0, signal: null });
  expect(seen.length).toBeGreaterThan(20);
  return { seen, output: r.stdout() };
}

describe(`the port while serve starts with a pending migration (${testDialect})`, { timeout: 120_000 }, () => {
  it("once /ok first answers, it never refuses a connection: the stand-in hands its socket to the service", async () => {
    const { seen, output } = await pollThroughStart({});
    expect(seen.filter((s) => s.answer !== 200), output).toEqual([]);
  });

  it("serve --workers 2: the primary's stand-in holds the port until a worker is built, so it is closed only while that worker binds", async () => {
    const { seen, output } = await pollThroughStart({ PORTCULLIS_WORKERS: "2" });
    const failed = seen.filter((s) => s.answer !== 200);
    // Before: closed from the end of the migration until a worker had started (1.3 s on 2 cores).
    const closedMs = failed.length === 0 ? 0 : failed.at(-1)!.at - failed[0]!.at;
    expect(closedMs, `${JSON.stringify(failed)}\n${output}`).toBeLessThan(300);
  });
});
