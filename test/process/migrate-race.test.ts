import { spawn } from "node:child_process";
import { join, resolve } from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, killAll, SECRET, startServerProcess } from "./harness.ts";

/**
 * Instances started together on a fresh database take turns migrating
 * (PostgreSQL advisory lock; SQLite exclusive lock). Several `portcullis migrate` processes
 * at once, then `serve` processes at once: every one exits 0 (or serves), each migration is
 * recorded once, and the schema is whole.
 */

const ROOT = resolve(import.meta.dirname, "../..");
const PROCESSES = 4;
const ROUNDS = 3;
const dbs: TestDatabase[] = [];

afterAll(async () => {
  killAll();
  for (const db of dbs.splice(0)) await db.drop();
});

function migrate(databaseUrl: string): Promise<{ code: number | null; output: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/portcullis.cjs"), "migrate"], {
      cwd: ROOT,
      env: { ...process.env, DATABASE_URL: databaseUrl, AUTH_SECRET: SECRET, PORTCULLIS_CONFIG: "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.once("exit", (code) => done({ code, output }));
  });
}

/** Names in the migrations table (with repeats) and the tables there are. */
async function inspect(url: string): Promise<{ migrations: string[]; tables: string[] }> {
  if (testDialect === "sqlite") {
    const db = new Database(url.slice("sqlite:".length), { readonly: true });
    try {
      const migrations = (db.prepare("select name from mikro_orm_migrations order by id").all() as { name: string }[]).map((r) => r.name);
      const tables = (db.prepare("select name from sqlite_master where type = 'table'").all() as { name: string }[]).map((r) => r.name);
      return { migrations, tables };
    } finally {
      db.close();
    }
  }
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const migrations = (await client.query<{ name: string }>("select name from mikro_orm_migrations order by id")).rows.map((r) => r.name);
    const tables = (await client.query<{ tablename: string }>("select tablename from pg_tables where schemaname = 'public'")).rows.map((r) => r.tablename);
    return { migrations, tables };
  } finally {
    await client.end();
  }
}

const TABLES = ["users", "accounts", "sessions", "verifications", "device_codes", "audit_events", "rate_limits"];

async function expectMigratedOnce(url: string) {
  const { migrations, tables } = await inspect(url);
  expect(migrations.length).toBeGreaterThanOrEqual(4);
  expect(new Set(migrations).size, migrations.join(", ")).toBe(migrations.length);
  for (const table of TABLES) expect(tables, table).toContain(table);
}

describe(`concurrent first starts on one fresh ${testDialect} database`, () => {
  it(`${PROCESSES} \`migrate\` processes at once: all exit 0, each migration applied once (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const db = await createTestDatabase();
      dbs.push(db);
      const runs = await Promise.all(Array.from({ length: PROCESSES }, () => migrate(db.url)));
      for (const run of runs) expect(run.code, run.output).toBe(0);
      await expectMigratedOnce(db.url);
    }
  });

  it("two `serve` processes at once both become ready on the fresh database", async () => {
    const db = await createTestDatabase();
    dbs.push(db);
    const config = configFile({ logLevel: "warn" });
    try {
      const servers = await Promise.all([0, 1].map(() => startServerProcess({ databaseUrl: db.url, config: config.path })));
      await expectMigratedOnce(db.url);
      for (const s of servers) s.kill("SIGTERM");
      for (const s of servers) expect(await s.exited).toBe(0);
    } finally {
      config.remove();
    }
  });
});
