import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../../harness/database.ts";

/**
 * `portcullis serve|migrate` as a real child process (bin/portcullis.cjs), with its config in a
 * .mjs module outside the project and its database in a fresh test database.
 */

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const BIN = join(REPO, "bin", "portcullis.cjs");
const SECRET = "cli-test-secret-cli-test-secret-012345";

let workDir: string;
const children = new Set<ChildProcess>();
const databases: TestDatabase[] = [];

beforeAll(() => {
  workDir = mkdtempSync(join(tmpdir(), "portcullis-cli-"));
});
afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  }
  await Promise.all(databases.map((d) => d.drop()));
  rmSync(workDir, { recursive: true, force: true });
});

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, "127.0.0.1", () => r()));
  const port = (srv.address() as { port: number }).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

/** A config module in its own temp directory (outside the project). */
function writeConfig(name: string, source: string): string {
  const dir = mkdtempSync(join(workDir, `${name}-`));
  const file = join(dir, "portcullis.config.mjs");
  writeFileSync(file, source);
  return file;
}

/** The child's environment: ours minus every variable the CLI reads, plus `extra`. */
function childEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const key of ["PORTCULLIS_CONFIG", "PORT", "HOST", "DATABASE_URL", "PUBLIC_URL", "AUTH_SECRET", "SMTP_URL", "NODE_OPTIONS"]) {
    delete env[key];
  }
  return { ...env, NODE_ENV: "development", ...extra };
}

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(args: string[], env: Record<string, string>, cwd = workDir): Run {
  const child = spawn(process.execPath, [BIN, ...args], { cwd, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  children.add(child);
  let out = "";
  let err = "";
  child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) => {
    child.once("exit", (code, signal) => resolveExit({ code, signal }));
  });
  return { child, stdout: () => out, stderr: () => err, exited };
}

/** Waits for the process to exit (killing it after `ms`). */
async function finish(r: Run, ms = 25_000) {
  const timer = setTimeout(() => r.child.kill("SIGKILL"), ms);
  try {
    return await r.exited;
  } finally {
    clearTimeout(timer);
  }
}

/** Polls `url` until it answers 200; fails early if the process exits. */
async function waitReady(r: Run, url: string, ms = 60_000): Promise<Response> {
  let exited = false;
  void r.exited.then(() => (exited = true));
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`process exited early\nstdout:\n${r.stdout()}\nstderr:\n${r.stderr()}`);
    try {
      const res = await fetch(url);
      if (res.status === 200) return res;
    } catch {
      // not listening yet
    }
    await new Promise((w) => setTimeout(w, 100));
  }
  throw new Error(`not ready after ${ms} ms\nstdout:\n${r.stdout()}\nstderr:\n${r.stderr()}`);
}

async function tablesOf(db: TestDatabase): Promise<string[]> {
  if (testDialect === "sqlite") {
    const conn = new Database(db.url.slice("sqlite:".length), { readonly: true });
    try {
      return (conn.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name);
    } finally {
      conn.close();
    }
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    const res = await client.query<{ tablename: string }>("select tablename from pg_tables where schemaname = 'public'");
    return res.rows.map((r) => r.tablename);
  } finally {
    await client.end();
  }
}

const GOOD_CONFIG = `export default { basePath: "/auth2", logLevel: "info", rateLimit: { enabled: false } };\n`;

// Child processes start through tsx: allow for a slow, loaded machine.
describe("portcullis serve", { timeout: 90_000 }, () => {
  it("--config <file outside the project> is loaded: the bridge answers under its basePath; SIGTERM exits 0", async () => {
    const config = writeConfig("flag", GOOD_CONFIG);
    const db = await freshDatabase();
    const port = await freePort();
    const r = run(["serve", "--config", config], { PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: SECRET });
    await waitReady(r, `http://127.0.0.1:${port}/auth2/ready`);
    const ok = await fetch(`http://127.0.0.1:${port}/auth2/ok`);
    expect(await ok.json()).toEqual({ ok: true });
    expect((await fetch(`http://127.0.0.1:${port}/api/auth/ok`)).status).toBe(404);

    // a real round trip through the served bridge
    const up = await fetch(`http://127.0.0.1:${port}/auth2/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Cli", email: "cli@example.test", password: "password123" }),
    });
    expect(up.status).toBe(200);
    const { token } = (await up.json()) as { token: string };
    const s = await fetch(`http://127.0.0.1:${port}/auth2/get-session`, { headers: { authorization: `Bearer ${token}` } });
    expect(((await s.json()) as { user: { email: string } }).user.email).toBe("cli@example.test");

    // logLevel "info" from the config file: the startup line is logged
    expect(r.stdout()).toContain("portcullis listening");
    expect(r.stdout()).toContain(String(port));
    // requests are logged by route pattern, never with the token
    expect(r.stdout()).not.toContain(token);

    r.child.kill("SIGTERM");
    const exit = await finish(r);
    expect(exit).toEqual({ code: 0, signal: null });
    // the port is free again
    await expect(fetch(`http://127.0.0.1:${port}/auth2/ok`)).rejects.toThrow();
  });

  it("PORTCULLIS_CONFIG works the same as --config", async () => {
    const config = writeConfig("env", GOOD_CONFIG);
    const db = await freshDatabase();
    const port = await freePort();
    const r = run(["serve"], { PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: SECRET, PORTCULLIS_CONFIG: config });
    await waitReady(r, `http://127.0.0.1:${port}/auth2/ready`);
    const ok = await fetch(`http://127.0.0.1:${port}/auth2/ok`);
    expect(await ok.json()).toEqual({ ok: true });
    r.child.kill("SIGTERM");
    expect(await finish(r)).toEqual({ code: 0, signal: null });
  });

  it("a relative --config path is resolved from the working directory", async () => {
    const config = writeConfig("relative", GOOD_CONFIG);
    const db = await freshDatabase();
    const port = await freePort();
    const r = run(["serve", "--config", "portcullis.config.mjs"], { PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: SECRET }, dirname(config));
    await waitReady(r, `http://127.0.0.1:${port}/auth2/ready`);
    r.child.kill("SIGTERM");
    expect(await finish(r)).toEqual({ code: 0, signal: null });
  });

  it("a config file with a bad key exits non-zero and names the key", async () => {
    const config = writeConfig("bad", `export default { basePath: "/auth2", definitelyNotAKey: 1 };\n`);
    const db = await freshDatabase();
    const r = run(["serve", "--config", config], { PORT: String(await freePort()), DATABASE_URL: db.url, AUTH_SECRET: SECRET });
    const exit = await finish(r);
    expect(exit.code).not.toBe(0);
    expect(exit.code).not.toBeNull();
    expect(r.stderr()).toContain("definitelyNotAKey");
  });

  it("a bad value names its (nested) key", async () => {
    const config = writeConfig("badvalue", `export default { rateLimit: { max: "lots" }, basePath: "nope" };\n`);
    const db = await freshDatabase();
    const r = run(["serve", "--config", config], { PORT: String(await freePort()), DATABASE_URL: db.url, AUTH_SECRET: SECRET });
    const exit = await finish(r);
    expect(exit.code).not.toBe(0);
    expect(r.stderr()).toContain("rateLimit.max");
    expect(r.stderr()).toContain("basePath");
  });

  it("a missing config file exits non-zero", async () => {
    const missing = join(workDir, "does-not-exist", "portcullis.config.mjs");
    const r = run(["serve", "--config", missing], { PORT: String(await freePort()), AUTH_SECRET: SECRET });
    const exit = await finish(r);
    expect(exit.code).not.toBe(0);
    expect(r.stderr()).toContain(missing);
  });

  it("an unknown command exits non-zero with the usage", async () => {
    const r = run(["frobnicate"], {});
    const exit = await finish(r);
    expect(exit.code).toBe(1);
    expect(r.stderr()).toContain("Usage: portcullis");
  });
});

describe("portcullis migrate", { timeout: 90_000 }, () => {
  it("applies the migrations, creates the tables and exits 0 (and again, idempotently)", async () => {
    const db = await freshDatabase();
    const first = run(["migrate"], { DATABASE_URL: db.url });
    const exit = await finish(first);
    expect(exit, first.stderr()).toEqual({ code: 0, signal: null });
    expect(first.stdout()).toContain("migrations applied");
    if (testDialect === "sqlite") expect(existsSync(db.url.slice("sqlite:".length))).toBe(true);
    const tables = await tablesOf(db);
    expect(tables).toEqual(expect.arrayContaining(["users", "sessions", "accounts", "verifications"]));

    const again = run(["migrate"], { DATABASE_URL: db.url });
    expect(await finish(again)).toEqual({ code: 0, signal: null });
    expect(await tablesOf(db)).toEqual(expect.arrayContaining(["users", "sessions", "accounts", "verifications"]));
  });
});
