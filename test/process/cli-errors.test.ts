import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, POSTGRES_ADMIN_URL, testDialect, type TestDatabase } from "../harness/database.ts";
import { freePort } from "./harness.ts";
import { BIN, CLI_SECRET, cliEnv, finish, killChildren, logLines, REPO, runCli, STACK_LINE, tempDir, waitForStatus, type Run } from "./cli-run.ts";

/**
 * The CLI as an operator meets it (the compiled bin under plain node). --version and
 * --help exit 0; every start-up or config failure is one line per problem naming the key, the
 * environment variable when one set it, the problem and the fix, with exit code 1 and no stack.
 */

const databases: TestDatabase[] = [];
const dirs: { remove(): void }[] = [];
afterAll(async () => {
  killChildren();
  for (const d of dirs) d.remove();
  await Promise.all(databases.map((d) => d.drop()));
});

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

function files(contents: Record<string, string>): string {
  const d = tempDir(contents);
  dirs.push(d);
  return d.dir;
}

/** Exit 1, nothing on stdout, no stack; the stderr lines (each starting "portcullis"). */
async function failsWith(r: Run): Promise<string[]> {
  const exit = await finish(r);
  const err = r.stderr();
  expect(exit, err).toEqual({ code: 1, signal: null });
  expect(err).not.toMatch(STACK_LINE);
  const lines = err.trim().split("\n");
  for (const line of lines) expect(line).toMatch(/^portcullis[ :]/);
  return lines;
}

const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;

/**
 * Flags and config checks that fail before any database is opened (or always name a SQLite
 * file) cannot depend on the dialect: the SQLite pass only, as vitest.config.ts's
 * dialect-independent files. What opens the run's database runs in both passes.
 */
const beforeAnyDatabase = testDialect === "sqlite";

describe.runIf(beforeAnyDatabase)("the CLI's own flags", { timeout: 120_000 }, () => {
  it("--version and -v print the package's version and exit 0", async () => {
    for (const flag of ["--version", "-v"]) {
      const r = runCli([flag]);
      expect(await finish(r), r.stderr()).toEqual({ code: 0, signal: null });
      expect(r.stdout().trim()).toBe(VERSION);
    }
  });

  it("--help, <command> --help and help <command> exit 0 with the usage", async () => {
    const top = runCli(["--help"]);
    expect(await finish(top), top.stderr()).toEqual({ code: 0, signal: null });
    expect(top.stdout()).toMatch(/Usage: portcullis/);
    for (const command of ["serve", "migrate", "create-admin"]) expect(top.stdout()).toContain(command);
    const serve = runCli(["serve", "--help"]);
    expect(await finish(serve)).toEqual({ code: 0, signal: null });
    expect(serve.stdout()).toMatch(/Usage: portcullis serve/);
    expect(serve.stdout()).toContain("--workers");
    expect(serve.stdout()).toContain("PORT");
    const help = runCli(["help", "create-admin"]);
    expect(await finish(help)).toEqual({ code: 0, signal: null });
    expect(help.stdout()).toContain("--email");
  });

  it("an unknown option (serve --port 4000) is one line naming where the port is set, exit 1", async () => {
    const lines = await failsWith(runCli(["serve", "--port", "4000"]));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^portcullis serve: unknown option '--port'.*PORT/);
  });

  it("an unknown command and a missing required option: one line each, exit 1", async () => {
    expect(await failsWith(runCli(["frobnicate"]))).toEqual([expect.stringMatching(/unknown command 'frobnicate'.*serve, migrate, create-admin/)]);
    expect(await failsWith(runCli(["create-admin"]))).toEqual([expect.stringMatching(/create-admin: required option '--email/)]);
  });
});

describe("config errors", { timeout: 120_000 }, () => {
  it.runIf(beforeAnyDatabase)("environment values: the variable is named, a secret's value never printed", async () => {
    const short = "short-secret-value";
    const lines = await failsWith(runCli(["serve"], { AUTH_SECRET: short, PORT: "4x" }));
    expect(lines).toEqual([expect.stringMatching(/config key port \(from PORT="4x"\): must be an integer\. Fix: set PORT to a port number/)]);
    const secret = await failsWith(runCli(["migrate"], { AUTH_SECRET: short, DATABASE_URL: "mysql://db/auth" }));
    expect(secret).toHaveLength(2);
    expect(secret.join("\n")).toMatch(/config key databaseUrl \(from DATABASE_URL="mysql:\/\/db\/auth"\): .*Fix: set DATABASE_URL to sqlite:<file> or postgres:/);
    expect(secret.join("\n")).toMatch(/config key secret \(from AUTH_SECRET\): must be at least 32 characters\. Fix: set AUTH_SECRET to a random string/);
    expect(secret.join("\n")).not.toContain(short);
  });

  it.runIf(beforeAnyDatabase)("config file values: one line per problem, each naming the key and the file", async () => {
    const dir = files({ "portcullis.config.mjs": `export default { rateLimit: { max: "lots", maxx: 1 }, basePath: "nope" };\n` });
    const file = join(dir, "portcullis.config.mjs");
    const lines = await failsWith(runCli(["serve", "--config", file], { AUTH_SECRET: CLI_SECRET }));
    expect(lines).toHaveLength(3);
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(new RegExp(`config key basePath \\(in ${file}\\): must start with /.*Fix: set basePath in ${file} to`)),
        expect.stringMatching(/config key rateLimit\.max \(in .*\): .*number.*Fix:/),
        expect.stringMatching(/config key rateLimit\.maxx \(in .*\) is not a known key.*Fix: remove it/),
      ]),
    );
  });

  it("NODE_ENV=production without a secret names AUTH_SECRET", async () => {
    const db = await freshDatabase();
    const lines = await failsWith(runCli(["serve"], { NODE_ENV: "production", DATABASE_URL: db.url, PORT: String(await freePort()) }));
    expect(lines).toEqual([expect.stringMatching(/config key secret is not set, and NODE_ENV=production needs it.*Fix: set AUTH_SECRET \(or secret in a config file\) to/)]);
  });

  it.runIf(beforeAnyDatabase)("a failed production start without SMTP: on one terminal (stdout and stderr on one file), the fatal line is the last", async () => {
    const dir = files({});
    // One descriptor for both streams, as a terminal or `docker logs` shows them.
    const r = spawnSync(`exec "${process.execPath}" "${BIN}" serve >"${join(dir, "out")}" 2>&1`, {
      shell: "/bin/sh",
      env: cliEnv({ NODE_ENV: "production", AUTH_SECRET: CLI_SECRET, DATABASE_URL: "postgres://postgres@127.0.0.1:1/nowhere", PORT: String(await freePort()) }),
      timeout: 60_000,
    });
    expect(r.status).toBe(1);
    const lines = readFileSync(join(dir, "out"), "utf8").trim().split("\n");
    expect(lines.at(-1)).toMatch(/^portcullis: database postgres:\/\/postgres@127\.0\.0\.1:1\/nowhere \(from DATABASE_URL\): nothing accepts connections/);
    // Before it, only warnings (here: no mail will leave), never an info line.
    for (const line of lines.slice(0, -1)) expect((JSON.parse(line) as { level: number }).level, line).toBeGreaterThanOrEqual(40);
  });

  it.runIf(beforeAnyDatabase)("NODE_ENV=production without a secret, with a config file: names AUTH_SECRET first, then the key in that file", async () => {
    const dir = files({ "portcullis.config.mjs": "export default { logLevel: \"info\" };\n" });
    const file = join(dir, "portcullis.config.mjs");
    const lines = await failsWith(runCli(["serve", "--config", file], { NODE_ENV: "production", DATABASE_URL: `sqlite:${join(dir, "db.sqlite")}`, PORT: String(await freePort()) }));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`config key secret is not set, and NODE_ENV=production needs it.*Fix: set AUTH_SECRET \\(or secret in ${file}\\) to a random string`))]);
  });

  it.runIf(beforeAnyDatabase)("NODE_ENV=production with metrics on the public port and neither a token nor public: true: one line naming the three ways out", async () => {
    const dir = files({ "portcullis.config.mjs": "export default { metrics: { enabled: true } };\n" });
    const file = join(dir, "portcullis.config.mjs");
    const env = { NODE_ENV: "production", AUTH_SECRET: CLI_SECRET, DATABASE_URL: `sqlite:${join(dir, "db.sqlite")}`, PORT: String(await freePort()) };
    const lines = await failsWith(runCli(["serve", "--config", file], env));
    expect(lines).toEqual([
      expect.stringMatching(new RegExp(`config key metrics\\.enabled \\(in ${file}\\): would serve the metrics on the service's public port to anyone.*Fix: set metrics\\.port .*, metrics\\.token \\(or METRICS_TOKEN.*\\) or metrics\\.public: true .* in ${file}\\.$`)),
    ]);
    // A token (here from METRICS_TOKEN) is enough: the service starts, and the metrics ask for it.
    const token = "metrics-token-metrics-token-0123456789";
    const port = await freePort();
    const r = runCli(["serve", "--config", file], { ...env, PORT: String(port), METRICS_TOKEN: token });
    await waitForStatus(r, `http://127.0.0.1:${port}/api/auth/ready`);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(401);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    r.child.kill("SIGTERM");
    expect(await finish(r), r.stderr()).toEqual({ code: 0, signal: null });
    expect(r.stdout() + r.stderr()).not.toContain(token);
  });

  it.runIf(beforeAnyDatabase)("a syntax error in the config file names the file and the line (JavaScript and TypeScript)", async () => {
    const dir = files({
      "bad.mjs": `export default {\n  basePath: "/x"\n  logLevel: "info",\n};\n`,
      "bad.ts": `const port: number = 1;\nexport default {\n  port,\n  basePath: "/x" logLevel: "info",\n};\n`,
    });
    expect(await failsWith(runCli(["migrate", "--config", join(dir, "bad.mjs")]))).toEqual([
      expect.stringMatching(new RegExp(`config file ${join(dir, "bad.mjs")} \\(--config\\): syntax error at line 3: .*logLevel.*Fix:`)),
    ]);
    expect(await failsWith(runCli(["migrate"], { PORTCULLIS_CONFIG: join(dir, "bad.ts") }))).toEqual([
      expect.stringMatching(/config file .*bad\.ts \(PORTCULLIS_CONFIG\): syntax error at line 4, column \d+: .*Fix:/),
    ]);
  });

  it.runIf(beforeAnyDatabase)("a missing config file and one without a default export", async () => {
    const dir = files({ "named.mjs": "export const config = {};\n" });
    expect(await failsWith(runCli(["migrate", "--config", join(dir, "nope.mjs")]))).toEqual([expect.stringMatching(/nope\.mjs \(--config\): does not exist/)]);
    expect(await failsWith(runCli(["migrate", "--config", join(dir, "named.mjs")]))).toEqual([expect.stringMatching(/named\.mjs \(--config\): has no default export object/)]);
  });
});

describe("a TypeScript config under plain node", { timeout: 120_000 }, () => {
  const source = `interface Partial { basePath: string; logLevel: "warn" | "info" }\nconst part: Partial = { basePath: "/ts-auth", logLevel: "warn" };\nexport default { ...part, rateLimit: { enabled: false } };\n`;
  for (const [title, pkg] of [["in a CommonJS package", `{ "type": "commonjs" }`], ["outside any package", null]] as const) {
    it(`${title}: serve loads it (its basePath answers, its logLevel holds)`, async () => {
      const dir = files({ "portcullis.config.ts": source, ...(pkg ? { "package.json": pkg } : {}) });
      const db = await freshDatabase();
      const port = await freePort();
      const r = runCli(["serve", "--config", "portcullis.config.ts"], { DATABASE_URL: db.url, PORT: String(port), AUTH_SECRET: CLI_SECRET }, dir);
      await waitForStatus(r, `http://127.0.0.1:${port}/ts-auth/ready`);
      r.child.kill("SIGTERM");
      expect(await finish(r), r.stderr()).toEqual({ code: 0, signal: null });
      expect(logLines(r.stdout()).filter((l) => l.level < 40)).toEqual([]); // logLevel "warn" from the .ts file
    });
  }
});

describe("database and port errors", { timeout: 120_000 }, () => {
  it("an unreachable PostgreSQL server: one line naming DATABASE_URL, its password masked", async () => {
    const port = await freePort(); // nothing listens there
    const lines = await failsWith(runCli(["serve"], { DATABASE_URL: `postgres://app:hunter2hunter2@127.0.0.1:${port}/auth`, AUTH_SECRET: CLI_SECRET, PORT: String(await freePort()) }));
    expect(lines).toEqual([expect.stringMatching(new RegExp(`database postgres://app:\\*\\*\\*@127\\.0\\.0\\.1:${port}/auth \\(from DATABASE_URL\\): nothing accepts connections .*Fix: start PostgreSQL`))]);
    expect(lines[0]).not.toContain("hunter2");
  });

  it.runIf(testDialect === "postgres")("a DATABASE_URL naming a database that does not exist fails, and nothing creates it", async () => {
    const name = `pc_missing_${Date.now().toString(36)}`;
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    for (const command of ["serve", "migrate"]) {
      const lines = await failsWith(runCli([command], { DATABASE_URL: url.toString(), AUTH_SECRET: CLI_SECRET, PORT: String(await freePort()) }));
      expect(lines).toEqual([expect.stringMatching(new RegExp(`the database "${name}" does not exist.*never creates one.*Fix: create it`))]);
    }
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    const found = await admin.query("select 1 from pg_database where datname = $1", [name]);
    await admin.end();
    expect(found.rowCount).toBe(0);
  });

  it("a port in use: one line naming PORT, on a fresh database (before migrating) and on a migrated one", async () => {
    const holder: Server = createServer();
    await new Promise<void>((r) => holder.listen(0, "127.0.0.1", () => r()));
    const port = (holder.address() as { port: number }).port;
    try {
      const db = await freshDatabase();
      const env = { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET, PORT: String(port) };
      const fresh = await failsWith(runCli(["serve"], env));
      expect(fresh).toEqual([expect.stringMatching(new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port} \\(port, from PORT="${port}"\\): another process already uses this port\\. Fix: .*set PORT to a free port`))]);
      expect(await finish(runCli(["migrate"], env))).toEqual({ code: 0, signal: null });
      const migrated = runCli(["serve"], env);
      expect(await failsWith(migrated)).toEqual(fresh);
      // The start-up's own info lines (how mail leaves) are not printed ahead of the fatal line.
      expect(migrated.stdout()).toBe("");
    } finally {
      await new Promise((r) => holder.close(r));
    }
  });
});

describe("migrate", { timeout: 120_000 }, () => {
  it("validates the whole config first, then prints each migration it applied, then nothing to apply", async () => {
    const db = await freshDatabase();
    const bad = await failsWith(runCli(["migrate"], { DATABASE_URL: db.url, LOG_LEVEL: "loud" }));
    expect(bad).toEqual([expect.stringMatching(/config key logLevel \(from LOG_LEVEL="loud"\)/)]);
    const first = runCli(["migrate"], { DATABASE_URL: db.url });
    expect(await finish(first), first.stderr()).toEqual({ code: 0, signal: null });
    const applied = first.stdout().split("\n").filter((l) => l.startsWith("applied "));
    expect(applied.length).toBeGreaterThan(3);
    expect(applied[0]).toMatch(/^applied Migration\d+_initial$/);
    expect(first.stdout()).toContain(`migrations applied: ${applied.length}`);
    const again = runCli(["migrate"], { DATABASE_URL: db.url });
    expect(await finish(again)).toEqual({ code: 0, signal: null });
    expect(again.stdout().trim()).toBe(`nothing to apply: all ${applied.length} migrations are applied`);
  });
});

describe("PORT without PUBLIC_URL", { timeout: 120_000 }, () => {
  it("derives publicUrl from the port: the logged and the used OAuth redirect URIs carry it", async () => {
    const db = await freshDatabase();
    const port = await freePort();
    const r = runCli(["serve"], { DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET, PORT: String(port), GITHUB_CLIENT_ID: "gh-id", GITHUB_CLIENT_SECRET: "gh-secret-value" });
    await waitForStatus(r, `http://127.0.0.1:${port}/api/auth/ready`);
    const origin = `http://127.0.0.1:${port}`;
    const start = await fetch(`${origin}/api/auth/sign-in/social`, {
      method: "POST",
      headers: { "content-type": "application/json", origin },
      body: JSON.stringify({ provider: "github" }),
    });
    expect(start.status).toBe(200);
    const authorize = new URL(((await start.json()) as { url: string }).url);
    expect(authorize.searchParams.get("redirect_uri")).toBe(`${origin}/api/auth/callback/github`);
    r.child.kill("SIGTERM");
    expect(await finish(r)).toEqual({ code: 0, signal: null });
    const logs = logLines(r.stdout());
    expect(logs.find((l) => l.msg === "portcullis listening")?.publicUrl).toBe(origin);
    expect(logs.filter((l) => l.redirectUri).map((l) => [l.provider, l.redirectUri])).toEqual([["github", `${origin}/api/auth/callback/github`]]);
    expect(r.stdout() + r.stderr()).not.toContain("gh-secret-value");
  });
});
