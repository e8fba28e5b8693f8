import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdmin } from "../../src/modules/admin/bootstrap.service.ts";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";
import pg from "pg";
import { POSTGRES_ADMIN_URL } from "../harness/database.ts";
import { pgAnswers } from "../harness/import-helpers.ts";
import { configFile, freePort, killAll, SECRET, startServerProcess, type ServerProcess } from "./harness.ts";
import { appSource, consumerPackageJson, consumerTsconfig, misuseSource, probeHooksSource, probeSource } from "./package-consumer.ts";

/**
 * Another app installs Portcullis from the tarball `npm pack` makes and uses it
 * under plain Node and its own strict tsconfig. Installed with --ignore-scripts: the client
 * needs no native build. The app runs against a service the test starts: on SQLite the
 * harness's, on PostgreSQL the INSTALLED package's own CLI (create-admin, serve), which also
 * proves the compiled server and its migrations ship.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const ADMIN_PASSWORD = "package-admin-password-1";
const pgUp = await pgAnswers();

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Asynchronous: the in-process server must keep answering while the child runs. */
function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 150_000): Promise<Ran> {
  const started = performance.now();
  return new Promise((done, fail) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (c: Buffer) => (stdout += c));
    child.stderr.on("data", (c: Buffer) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.once("error", fail);
    child.once("close", (code) => {
      clearTimeout(timer);
      done({ code, stdout, stderr, ms: Math.round(performance.now() - started) });
    });
  });
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath ?? e.path, e.name));
}

const TS_SPECIFIER = /(\bfrom\s*|\bimport\s*\(\s*)["']\.{1,2}\/[^"'\n]*\.ts["']/;

let work: string;
let app: string;
let packed: string[];
let db: TestDatabase | undefined;

/**
 * The app's type checks (two tsc runs over ~600 files, most of this file's time) cannot depend
 * on the database: they run in the SQLite pass only, as vitest.config.ts's dialect-independent
 * files do; the PostgreSQL pass keeps everything that starts the service.
 */
const typesPass = testDialect === "sqlite";

describe(`the packed package in another app (service on ${testDialect})`, () => {
  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), "pc-package-"));
    // `prepare` builds dist/ first when the sources are newer.
    const pack = await run("npm", ["pack", "--pack-destination", work, "--json"], ROOT);
    expect(pack.code, pack.stderr).toBe(0);
    const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("[\n"))) as { filename: string; size: number; files: { path: string }[] }[];
    packed = info!.files.map((f) => f.path);
    console.log(`npm pack: ${info!.files.length} files, ${(info!.size / 1e6).toFixed(2)} MB, ${pack.ms} ms`);

    app = join(work, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify(consumerPackageJson, null, 2));
    const flags = ["--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts"];
    const install = await run("npm", ["install", ...flags, join(work, info!.filename)], app);
    expect(install.code, install.stderr).toBe(0);
    const installed = filesUnder(join(app, "node_modules"));
    const bytes = installed.reduce((sum, f) => sum + statSync(f).size, 0);
    console.log(`npm install of the tarball: ${install.ms} ms, ${/added (\d+) package/.exec(install.stdout)?.[1]} packages, ${(bytes / 1e6).toFixed(0)} MB, no install scripts`);
    // The app's own type definitions for Node (it runs there), as any Node app has them.
    const nodeTypes = JSON.parse(readFileSync(join(ROOT, "node_modules/@types/node/package.json"), "utf8")).version as string;
    expect((await run("npm", ["install", ...flags, "-D", `@types/node@${nodeTypes}`], app)).code).toBe(0);

    writeFileSync(join(app, "app.ts"), appSource);
    writeFileSync(join(app, "misuse.ts"), misuseSource);
    writeFileSync(join(app, "probe-hooks.mjs"), probeHooksSource);
    writeFileSync(join(app, "probe.mjs"), probeSource);
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(consumerTsconfig(["app.ts"]), null, 2));
    writeFileSync(join(app, "tsconfig.bundler.json"), JSON.stringify(consumerTsconfig(["app.ts"], { module: "preserve", moduleResolution: "bundler", noEmit: true }), null, 2));
    writeFileSync(join(app, "tsconfig.misuse.json"), JSON.stringify(consumerTsconfig(["misuse.ts"], { noEmit: true }), null, 2));
  }, 220_000);

  afterAll(async () => {
    killAll();
    await db?.drop();
    if (work) rmSync(work, { recursive: true, force: true });
  }, 30_000);

  it("ships compiled ESM, .d.ts, both dialects' migrations and the reference renderer; no sources, tests or bench", () => {
    for (const entry of ["dist/src/index.js", "dist/src/index.d.ts", "dist/src/client/index.js", "dist/src/client/index.d.ts", "dist/src/client/router.d.ts", "bin/portcullis.cjs", "scripts/build.mjs", "dist/vendor/scalar-api-reference.js"]) {
      expect(packed, entry).toContain(entry);
    }
    for (const dialect of ["sqlite", "postgresql"]) {
      const sources = readdirSync(join(ROOT, "src/db/migrations", dialect)).filter((f) => f.endsWith(".ts"));
      expect(sources.length).toBeGreaterThan(0);
      for (const f of sources) expect(packed, `${dialect} migration ${f}`).toContain(`dist/src/db/migrations/${dialect}/${f.replace(/\.ts$/, ".js")}`);
    }
    const unwanted = packed.filter((p) => /^(src|test|bench|rest-bridge|node_modules|data)\//.test(p) || p.endsWith(".ts") && !p.endsWith(".d.ts") || p.endsWith(".map") || p.includes(".test."));
    expect(unwanted).toEqual([]);
  });

  it("its .d.ts files name .js files (a tsconfig without allowImportingTsExtensions reads them: no TS5097)", () => {
    const declarations = filesUnder(join(app, "node_modules/portcullis/dist")).filter((f) => f.endsWith(".d.ts"));
    expect(declarations.length).toBeGreaterThan(50);
    const offending = declarations.filter((f) => TS_SPECIFIER.test(readFileSync(f, "utf8")));
    expect(offending.map((f) => relative(app, f))).toEqual([]);
  });

  it.runIf(typesPass)("an app calling typed procedures type-checks with the app's strict tsconfig (nodenext, and bundler resolution)", async () => {
    const nodenext = await run(process.execPath, [TSC, "-p", "tsconfig.json", "--pretty", "false", "--extendedDiagnostics"], app);
    expect(nodenext.code, nodenext.stdout).toBe(0);
    const files = /^Files:\s+(\d+)/m.exec(nodenext.stdout)?.[1];
    console.log(`tsc of the app (nodenext, skipLibCheck off): ${files} files read, ${nodenext.ms} ms`);
    const bundler = await run(process.execPath, [TSC, "-p", "tsconfig.bundler.json", "--pretty", "false"], app);
    expect(bundler.code, bundler.stdout).toBe(0);
  });

  it.runIf(typesPass)("an app misusing them fails to type-check, with the expected error on each bad line and nowhere else", async () => {
    const misuse = await run(process.execPath, [TSC, "-p", "tsconfig.misuse.json", "--pretty", "false"], app);
    expect(misuse.code).not.toBe(0);
    const expected = misuseSource.split("\n").flatMap((line, i) => {
      const code = /\/\/ (TS\d+)$/.exec(line)?.[1];
      return code ? [`${i + 1} ${code}`] : [];
    });
    expect(expected.length).toBe(5);
    const got = [...misuse.stdout.matchAll(/^misuse\.ts\((\d+),\d+\): error (TS\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
    expect([...new Set(got)].sort(), misuse.stdout).toEqual(expected.sort());
    expect(misuse.stdout, "errors only in the app's file").not.toMatch(/^(?!misuse\.ts)\S+\(\d+,\d+\): error/m);
  });

  it("importing portcullis/client loads @trpc/client and nothing of the server, no native module", async () => {
    const urls = join(work, "resolved.txt");
    writeFileSync(urls, "");
    const probe = await run(process.execPath, ["probe.mjs", urls], app);
    expect(probe.code, probe.stderr).toBe(0);
    const { clientExports, routerExports, cjs, natives } = JSON.parse(probe.stdout) as { clientExports: string[]; routerExports: string[]; cjs: string[]; natives: string[] };
    expect(clientExports).toEqual(expect.arrayContaining(["createPortcullisClient", "authErrorCode", "isPortcullisClientError", "TRPCClientError", "TRPC_PATH"]));
    expect(routerExports).toEqual([]); // types only
    const loaded = [...readFileSync(urls, "utf8").split("\n").filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u)), ...cjs];
    const ours = loaded.filter((f) => f.includes("/node_modules/portcullis/")).map((f) => f.slice(f.indexOf("/node_modules/portcullis/") + "/node_modules/portcullis/".length));
    expect(ours.length).toBeGreaterThan(0);
    // the client entry, and the light client's runtime it shares (packages/client/src/core.ts)
    expect(ours.filter((f) => !f.startsWith("dist/src/client/") && f !== "dist/packages/client/src/core.js")).toEqual([]);
    const packages = new Set(loaded.map((f) => /\/node_modules\/((@[^/]+\/)?[^/]+)\//.exec(f)?.[1]).filter(Boolean));
    expect([...packages].sort()).toEqual(["@trpc/client", "@trpc/server", "portcullis"]);
    expect(natives).toEqual([]);
  });

  // docs/getting-started.md "Installing": what `npm pack` makes is what a publish ships, and `npx portcullis serve` in
  // the app serves from it. On PostgreSQL (pg is plain JavaScript): this install ran no script, so no SQLite binary.
  it.runIf(pgUp)("npx portcullis serve, in the app that installed the tarball, applies the migrations and answers /ready", async () => {
    const name = `pc_npx_${Date.now().toString(36)}`;
    const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(POSTGRES_ADMIN_URL);
    url.pathname = `/${name}`;
    const port = await freePort();
    const child = spawn("npx", ["--no-install", "portcullis", "serve"], {
      cwd: app,
      env: { ...process.env, DATABASE_URL: url.toString(), AUTH_SECRET: SECRET, NODE_ENV: "production", PORT: String(port), HOST: "127.0.0.1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    child.stdout.on("data", (c: Buffer) => (out += c));
    child.stderr.on("data", (c: Buffer) => (out += c));
    try {
      let ready = 0;
      for (const deadline = Date.now() + 90_000; Date.now() < deadline && ready !== 200; await new Promise((r) => setTimeout(r, 250))) {
        ready = await fetch(`http://127.0.0.1:${port}/api/auth/ready`).then((r) => r.status, () => 0);
      }
      expect(ready, out).toBe(200);
      expect(out).toContain(`"msg":"portcullis listening"`);
    } finally {
      child.kill("SIGTERM");
      await new Promise((r) => child.once("close", r));
      await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await admin.end();
    }
  }, 120_000);

  it("runs under plain node against a started service: sign-up, get-session, a typed error, impersonation by the result's token", async () => {
    const admin = `package.admin.${Date.now()}@example.test`;
    let url: string;
    let server: TestServer | undefined;
    let proc: ServerProcess | undefined;
    let config: ReturnType<typeof configFile> | undefined;
    if (testDialect === "postgres") {
      // The installed package serves: its CLI, its compiled migrations, no TypeScript anywhere.
      db = await createTestDatabase();
      config = configFile({ rateLimit: { enabled: false }, logLevel: "warn" });
      const bin = join(app, "node_modules/portcullis/bin/portcullis.cjs");
      const env = { DATABASE_URL: db.url, AUTH_SECRET: SECRET, PORTCULLIS_ADMIN_PASSWORD: ADMIN_PASSWORD, NODE_ENV: "production" };
      const created = await run(process.execPath, [bin, "create-admin", "--email", admin, "--config", config.path], app, env);
      expect(created.code, created.stderr).toBe(0);
      proc = await startServerProcess({ databaseUrl: db.url, config: config.path, bin, cwd: app });
      url = proc.url;
    } else {
      server = await startTestServer();
      await createAdmin(server.portcullis.app.orm.em.fork(), server.portcullis.app.config, { email: admin, password: ADMIN_PASSWORD, name: "Admin" });
      url = server.url;
    }
    try {
      // The type-check test emits out/app.js; in the pass that skips it (typesPass), emit only.
      if (!existsSync(join(app, "out/app.js"))) expect((await run(process.execPath, [TSC, "-p", "tsconfig.json", "--noCheck"], app)).code).toBe(0);
      const ran = await run(process.execPath, ["out/app.js"], app, { PORTCULLIS_URL: url, ADMIN_EMAIL: admin, ADMIN_PASSWORD });
      expect(ran.code, `${ran.stderr}\n${proc?.output() ?? ""}`).toBe(0);
      const result = JSON.parse(ran.stdout.trim());
      expect(result.userId).toMatch(/\S/);
      expect(result.sessionEmail).toMatch(/^consumer\.\d+@example\.test$/);
      expect(result.wrongPassword).toBe("INVALID_EMAIL_OR_PASSWORD");
      expect(result.impersonation.userId).toBe(result.userId);
      expect(result.impersonation.impersonatedBy).toMatch(/\S/);
      expect(result.impersonation.impersonatedBy).not.toBe(result.userId);
      expect(result.impersonation.stopped).toBeNull(); // a bearer client: ended, nothing handed back
      expect(result.impersonation.afterStop).toBeNull(); // the impersonation token is dead
    } finally {
      if (proc) {
        proc.kill("SIGTERM");
        await proc.exited;
      }
      config?.remove();
      await server?.close();
    }
  });
});
