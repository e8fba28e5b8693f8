import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { buildBetterAuthSource, type BetterAuthSource } from "../harness/import-helpers.ts";
import { CLI_SECRET, finish, killChildren, runCli, STACK_LINE, tempDir } from "./cli-run.ts";
import { join } from "node:path";

/**
 * The commands the operations docs describe, as the CLI runs them: `portcullis openapi` (§1)
 * and `portcullis import better-auth` (§5), compiled, under plain node.
 */

const databases: TestDatabase[] = [];
const cleanups: (() => unknown)[] = [];
afterAll(async () => {
  killChildren();
  for (const c of cleanups) await c();
  await Promise.all(databases.map((d) => d.drop()));
});

async function countUsers(db: TestDatabase): Promise<number> {
  if (testDialect === "sqlite") {
    const conn = new Database(db.url.slice("sqlite:".length), { readonly: true });
    try {
      return (conn.prepare("select count(*) as n from users").get() as { n: number }).n;
    } finally {
      conn.close();
    }
  }
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  try {
    return Number((await client.query<{ n: string }>("select count(*) as n from users")).rows[0]!.n);
  } finally {
    await client.end();
  }
}

describe("portcullis openapi", { timeout: 120_000 }, () => {
  it("prints the OpenAPI 3.1 document of the configuration on stdout, and nothing else", async () => {
    const dir = tempDir({ "portcullis.config.mjs": `export default { basePath: "/auth2" };\n` });
    cleanups.push(dir.remove);
    const r = runCli(["openapi", "--config", join(dir.dir, "portcullis.config.mjs")], { PUBLIC_URL: "https://auth.example.test" });
    expect(await finish(r), r.stderr()).toEqual({ code: 0, signal: null });
    const doc = JSON.parse(r.stdout()) as { openapi: string; servers: { url: string }[]; paths: Record<string, unknown> };
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.servers[0]!.url).toBe("https://auth.example.test/auth2");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/sign-in/email", "/get-session", "/ok"]));
  });

  it("a bad config is one line on stderr, exit 1, nothing on stdout", async () => {
    const r = runCli(["openapi"], { PUBLIC_URL: "localhost:3000" });
    expect(await finish(r)).toEqual({ code: 1, signal: null });
    expect(r.stdout()).toBe("");
    expect(r.stderr().trim()).toMatch(/^portcullis: config key publicUrl \(from PUBLIC_URL="localhost:3000"\): must be an absolute http\(s\) URL/);
  });
});

describe(`portcullis import better-auth (${testDialect})`, { timeout: 180_000 }, () => {
  let source: BetterAuthSource;

  it("--dry-run: the summary, a progress line per table, nothing written; then the import; then a re-run skips everything", async () => {
    source = await buildBetterAuthSource(testDialect);
    cleanups.push(() => source.drop());
    const db = await createTestDatabase();
    databases.push(db);
    const env = { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET };

    const dry = runCli(["import", "better-auth", "--from", source.url, "--dry-run"], env);
    expect(await finish(dry), dry.stderr()).toEqual({ code: 0, signal: null });
    expect(dry.stdout()).toMatch(/^Dry run \(nothing written\): better-auth/);
    expect(dry.stdout()).toMatch(/ {2}user {9}5 read, 5 imported, 0 skipped, 0 failed/);
    for (const table of ["user", "account", "session", "verification"]) expect(dry.stderr()).toMatch(new RegExp(`^${table} +\\[#+\\] \\d+/\\d+$`, "m"));
    expect(await countUsers(db)).toBe(0);

    const real = runCli(["import", "better-auth", "--from", source.url], env);
    expect(await finish(real), real.stderr()).toEqual({ code: 0, signal: null });
    expect(real.stdout()).toMatch(/ {2}user {9}5 read, 5 imported, 0 skipped, 0 failed/);
    expect(real.stdout()).toMatch(/not imported: twoFactor \(1 rows\)/);
    expect(await countUsers(db)).toBe(5);

    const again = runCli(["import", "better-auth", "--from", source.url], env);
    expect(await finish(again)).toEqual({ code: 0, signal: null });
    expect(again.stdout()).toMatch(/ {2}user {9}5 read, 0 imported, 5 skipped, 0 failed/);
    expect(await countUsers(db)).toBe(5);
  });

  it("no --from, or one that is not a better-auth database: one line, exit 1", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const env = { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET };
    const none = runCli(["import", "better-auth"], env);
    expect(await finish(none)).toEqual({ code: 1, signal: null });
    expect(none.stderr().trim()).toMatch(/^portcullis import better-auth: required option '--from <url>' not specified; see portcullis import better-auth --help\.$/);
    const missing = runCli(["import", "better-auth", "--from", "sqlite:/nonexistent/ba.db"], env);
    expect(await finish(missing)).toEqual({ code: 1, signal: null });
    expect(missing.stderr().trim().split("\n")).toEqual([expect.stringMatching(/^portcullis import better-auth: --from: no SQLite database at \/nonexistent\/ba\.db\.$/)]);
    expect(missing.stderr()).not.toMatch(STACK_LINE);
  });
});
