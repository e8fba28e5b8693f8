import { createHash, randomBytes } from "node:crypto";
import { existsSync, rmSync, statSync } from "node:fs";
import { Agent, request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../harness/database.ts";
import { configFile, killAll, getJson, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * Crash safety, on a SQLite file: the server process is killed with SIGKILL in the
 * middle of a write-heavy load (concurrent sign-ups and sign-ins), restarted on the same file,
 * and every request that was answered 200 must be durable, nothing half-written: every user has
 * its credential account, no orphan rows, PRAGMA integrity_check ok. Several loops on one file.
 * SIGTERM instead drains: every request in flight is answered, the database is closed cleanly
 * (the WAL is checkpointed and removed), the process exits 0.
 *
 * SQLite only: on PostgreSQL, durability is the database server's, not this process's.
 */

const LOOPS = Number(process.env.CRASH_LOOPS ?? 5);
const CONCURRENCY = 12;

interface Confirmed {
  email: string;
  password: string;
  userId: string;
  /** Session tokens handed out with a 200 (sign-up and sign-ins). */
  tokens: string[];
}

const sha256 = (v: string) => createHash("sha256").update(v).digest("hex");
const run = Date.now().toString(36);
let seq = 0;
const file = join(tmpdir(), `pc_crash_${run}_${randomBytes(3).toString("hex")}.db`);
let config: ReturnType<typeof configFile>;
const confirmed = new Map<string, Confirmed>();
const figures = { loops: 0, answered200: 0, cutOff: 0, checkedUsers: 0, checkedSessions: 0 };

beforeAll(() => {
  // rate limits off: the load is one client; the sweeper off: it would delete nothing anyway
  config = configFile({ rateLimit: { enabled: false }, sweeper: { intervalSec: 0 }, logLevel: "warn" });
});

afterAll(() => {
  killAll();
  config?.remove();
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
  console.log(`[crash] ${JSON.stringify(figures)}`);
});

/** Sign-ups and sign-ins from CONCURRENCY clients until `stop` or the server dies. */
async function load(server: ServerProcess, stop: { now: boolean }): Promise<void> {
  const known = [...confirmed.values()];
  const client = async () => {
    while (!stop.now) {
      const signUp = known.length === 0 || Math.random() < 0.7;
      try {
        if (signUp) {
          const email = `crash.${run}.${++seq}@example.test`;
          const password = `crash-password-${seq}`;
          const res = await postJson(`${server.auth}/sign-up/email`, { name: `Crash ${seq}`, email, password });
          if (res.status !== 200) throw new Error(`sign-up answered ${res.status}: ${JSON.stringify(res.body)}`);
          confirmed.set(email, { email, password, userId: res.body.user.id, tokens: [res.headers.get("set-auth-token")!] });
        } else {
          const user = known[Math.floor(Math.random() * known.length)]!;
          const res = await postJson(`${server.auth}/sign-in/email`, { email: user.email, password: user.password });
          if (res.status !== 200) throw new Error(`sign-in answered ${res.status}: ${JSON.stringify(res.body)}`);
          confirmed.get(user.email)!.tokens.push(res.headers.get("set-auth-token")!);
        }
        figures.answered200 += 1;
      } catch (err) {
        if (err instanceof Error && err.message.includes("answered")) throw err; // a real failure, not the kill
        figures.cutOff += 1; // in flight when the process died: no answer, no promise made
        return;
      }
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, client));
}

/** The file, opened after the crash (SQLite recovers the WAL on open): durable and whole? */
function checkFile(): void {
  const db = new Database(file);
  try {
    expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    expect(db.pragma("foreign_key_check")).toEqual([]);
    const userById = db.prepare("select id, email from users where id = ?");
    const credentials = db.prepare("select count(*) as n from accounts where user_id = ? and provider_id = 'credential' and password is not null");
    const session = db.prepare("select user_id from sessions where token_hash = ?");
    for (const c of confirmed.values()) {
      expect(userById.get(c.userId), `user ${c.email} answered 200 but is gone`).toEqual({ id: c.userId, email: c.email });
      expect((credentials.get(c.userId) as { n: number }).n, `credential account of ${c.email}`).toBe(1);
      for (const token of c.tokens) {
        expect(session.get(sha256(token)), `a session answered 200 for ${c.email} is gone`).toEqual({ user_id: c.userId });
        figures.checkedSessions += 1;
      }
      figures.checkedUsers += 1;
    }
    // nothing half-written: no user without its credential account (every user here signed up), no orphans
    const count = (sql: string) => (db.prepare(sql).get() as { n: number }).n;
    expect(count("select count(*) as n from users u where not exists (select 1 from accounts a where a.user_id = u.id and a.provider_id = 'credential')")).toBe(0);
    expect(count("select count(*) as n from accounts a where not exists (select 1 from users u where u.id = a.user_id)")).toBe(0);
    expect(count("select count(*) as n from sessions s where not exists (select 1 from users u where u.id = s.user_id)")).toBe(0);
    // a request without an answer may have committed or not: either way whole (checked above), never more users than sign-ups tried
    expect(count("select count(*) as n from users")).toBeGreaterThanOrEqual(confirmed.size);
    expect(count("select count(*) as n from users")).toBeLessThanOrEqual(seq);
  } finally {
    db.close();
  }
}

/**
 * POST through `agent`; `sent` resolves once the whole request is handed to the OS, `reply` with
 * the status and whether the request went out on a connection the server had accepted before.
 */
function rawPost(agent: Agent, url: string, body: unknown): { sent: Promise<void>; reply: Promise<{ status: number; reused: boolean }> } {
  const { hostname, port, pathname } = new URL(url);
  let markSent!: () => void;
  const sent = new Promise<void>((r) => (markSent = r));
  const reply = new Promise<{ status: number; reused: boolean }>((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, path: pathname, method: "POST", agent, headers: { "content-type": "application/json" } }, (res) => {
      res.resume();
      res.on("end", () => resolve({ status: res.statusCode ?? 0, reused: req.reusedSocket }));
    });
    req.on("error", reject);
    req.on("finish", markSent);
    req.end(JSON.stringify(body));
  });
  return { sent, reply };
}

function rawGet(agent: Agent, url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

describe.skipIf(testDialect !== "sqlite")("crash safety on a SQLite file", () => {
  it(`SIGKILL during a write-heavy load, ${LOOPS} times: every 200 is durable, nothing is half-written`, async () => {
    for (let loop = 0; loop < LOOPS; loop++) {
      const server = await startServerProcess({ databaseUrl: `sqlite:${file}`, config: config.path });
      const stop = { now: false };
      const running = load(server, stop);
      await new Promise((r) => setTimeout(r, 500 + Math.random() * 1200));
      server.kill("SIGKILL");
      expect(await server.exited).toBe("SIGKILL");
      stop.now = true;
      await running;
      expect(existsSync(`${file}-wal`)).toBe(true); // it really died mid-flight: nobody checkpointed
      checkFile();
      figures.loops += 1;
    }
    // and the service comes back on the file: confirmed users sign in, their sessions work
    const server = await startServerProcess({ databaseUrl: `sqlite:${file}`, config: config.path });
    try {
      const sample = [...confirmed.values()].sort(() => Math.random() - 0.5).slice(0, 8);
      for (const c of sample) {
        expect((await postJson(`${server.auth}/sign-in/email`, { email: c.email, password: c.password })).status, c.email).toBe(200);
        expect((await getJson(`${server.auth}/get-session`, { authorization: `Bearer ${c.tokens[0]}` })).body?.user?.id).toBe(c.userId);
      }
    } finally {
      server.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    }
    expect(figures.answered200).toBeGreaterThan(LOOPS * 5);
  }, 240_000);

  it("SIGTERM drains: every request in flight is answered 200, the database is closed cleanly, exit 0", async () => {
    const server = await startServerProcess({ databaseUrl: `sqlite:${file}`, config: config.path });
    const emails = Array.from({ length: 32 }, () => `drain.${run}.${++seq}@example.test`);
    // 32 keep-alive connections the server has accepted: the sign-ups go out on them (a connection
    // still in the kernel's accept queue at SIGTERM is refused, as it must be: it was never taken).
    const agent = new Agent({ keepAlive: true, maxSockets: emails.length, maxFreeSockets: emails.length });
    expect(await Promise.all(emails.map(() => rawGet(agent, `${server.auth}/ok`)))).toEqual(emails.map(() => 200));
    let answered = 0;
    const sent: Promise<void>[] = [];
    const inFlight = emails.map((email) => {
      const r = rawPost(agent, `${server.auth}/sign-up/email`, { name: "Drain", email, password: "drain-password-1" });
      sent.push(r.sent);
      return r.reply.finally(() => (answered += 1));
    });
    // Every request written out; argon2 (4 threads) keeps most of them busy for a while yet.
    await Promise.all(sent);
    await new Promise((r) => setTimeout(r, 20));
    const pendingAtSignal = emails.length - answered;
    const signalled = Date.now();
    server.kill("SIGTERM");
    const replies = await Promise.allSettled(inFlight);
    expect(replies.map((r) => (r.status === "fulfilled" ? r.value : String(r.reason)))).toEqual(emails.map(() => ({ status: 200, reused: true })));
    agent.destroy();
    expect(await server.exited, server.output()).toBe(0);
    const drainMs = Date.now() - signalled;
    console.log(`[crash] SIGTERM with ${pendingAtSignal} of ${emails.length} requests in flight: all answered, exit 0 after ${drainMs} ms`);
    expect(pendingAtSignal).toBeGreaterThanOrEqual(8);
    expect(drainMs).toBeLessThan(5000); // under keepAliveTimeout: idle keep-alive connections are closed at once
    // closed cleanly: the last connection checkpointed and removed the WAL
    expect(!existsSync(`${file}-wal`) || statSync(`${file}-wal`).size === 0).toBe(true);
    // and nothing listens any more
    await expect(fetch(`${server.auth}/ok`, { signal: AbortSignal.timeout(2000) })).rejects.toThrow();
    const db = new Database(file, { readonly: true });
    try {
      const found = db.prepare(`select count(*) as n from users where email in (${emails.map(() => "?").join(",")})`).get(...emails) as { n: number };
      expect(found.n).toBe(emails.length);
      expect(db.pragma("integrity_check", { simple: true })).toBe("ok");
    } finally {
      db.close();
    }
  }, 120_000);
});
