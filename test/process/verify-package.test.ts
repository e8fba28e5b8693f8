import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../harness/database.ts";
import * as sourceEntry from "../../src/verify/index.ts";
import { configFile, getJson, killAll, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * `@portcullis/verify` (packages/verify, compiled from src/verify; docs/machine-access.md
 * "Installing @portcullis/verify"): packed as a publish would, installed into an empty app. The
 * targets: at most 10 packages and 5 MB installed (typescript, the app's own compiler, aside), no
 * install scripts, declarations that import nothing but jose, the same exports as `portcullis/verify`,
 * and a 30-line resource server under a strict tsconfig type-checks reading at most 60 files
 * (besides TypeScript's own lib files). It then runs against a Portcullis process, verifying a
 * token from GET /token and refusing a forged one.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");
const ISSUER = "https://auth.verify-package.test";

function run(cmd: string, args: string[], cwd: string, env: Record<string, string> = {}, timeoutMs = 200_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
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
      done({ code, stdout, stderr });
    });
  });
}

/** 30 lines: a resource server's handler (the Fetch API's Request and Response), called as a server would. */
const APP = `import { createVerifier, errors, type PortcullisClaims } from "@portcullis/verify";

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env ?? {};
const issuer = env["ISSUER"] ?? "http://127.0.0.1:3000";
const verifier = createVerifier({ issuer, jwksUrl: \`\${env["PORTCULLIS_URL"] ?? issuer}/api/auth/jwks\` });

/** The caller's claims, or 401 with a Bearer challenge (RFC 6750 §3). */
async function handle(req: Request): Promise<Response> {
  const token = req.headers.get("authorization")?.replace(/^Bearer /i, "") ?? "";
  try {
    const claims: PortcullisClaims = await verifier.verify(token);
    return Response.json({ sub: claims.sub, email: claims.email, role: claims.role, sid: typeof claims.sid });
  } catch (err) {
    const reason = err instanceof errors.JOSEError ? err.code : "other";
    return Response.json({ reason }, { status: 401, headers: { "www-authenticate": "Bearer" } });
  }
}

const call = async (bearer: string) => {
  const res = await handle(new Request("http://orders.test/orders", { headers: { authorization: \`Bearer \${bearer}\` } }));
  return { status: res.status, body: (await res.json()) as unknown };
};
const token = env["TOKEN"] ?? "";
const [head, payload, signature = ""] = token.split(".");
const forged = \`\${head}.\${payload}.\${[...signature].reverse().join("")}\`;

console.log(JSON.stringify({ valid: await call(token), forged: await call(forged), garbage: await call("not-a-token") }));
// @ts-expect-error: the options need the issuer
createVerifier({ jwksUrl: "http://127.0.0.1:3000/api/auth/jwks" });
export {};
`;

let work: string;
let app: string;
let db: TestDatabase;
let config: ReturnType<typeof configFile>;
let server: ServerProcess;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pc-verify-"));
  const pack = await run("npm", ["pack", "--pack-destination", work, "--json"], join(ROOT, "packages/verify"));
  expect(pack.code, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("[\n"))) as { filename: string; files: { path: string }[] }[];
  const files = info!.files.map((f) => f.path).sort();
  expect(files).toEqual(expect.arrayContaining(["dist/index.d.ts", "dist/index.js", "package.json"]));
  // src/verify compiled, nothing else: its JavaScript and declarations (every source file has both)
  expect(files.filter((f) => f !== "package.json" && !/^dist\/.+\.(d\.ts|js)$/.test(f))).toEqual([]);
  const js = files.filter((f) => f.endsWith(".js"));
  expect(files.filter((f) => f.endsWith(".d.ts"))).toEqual(js.map((f) => f.replace(/\.js$/, ".d.ts")).sort());
  app = join(work, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "verify-app", private: true, type: "module" }));
  const install = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(work, info!.filename)], app);
  expect(install.code, install.stderr).toBe(0);
  db = await createTestDatabase();
  config = configFile({ jwt: { issuer: ISSUER }, logLevel: "warn" });
  server = await startServerProcess({ databaseUrl: db.url, config: config.path });
}, 240_000);

afterAll(async () => {
  await server?.stop();
  killAll();
  config?.remove();
  await db?.drop();
  if (work) rmSync(work, { recursive: true, force: true });
}, 60_000);

describe("@portcullis/verify, packed and installed into an empty app", () => {
  it("≤ 10 packages, ≤ 5 MB, no install scripts", () => {
    const modules = join(app, "node_modules");
    const packages = readdirSync(modules).flatMap((name) => (name.startsWith("@") ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`) : name.startsWith(".") ? [] : [name]));
    console.log(`[verify package] packages: ${packages.join(", ")}`);
    expect(packages.length).toBeLessThanOrEqual(10);
    expect(packages).toEqual(expect.arrayContaining(["@portcullis/verify", "jose"]));
    let bytes = 0;
    for (const p of packages) {
      for (const e of readdirSync(join(modules, p), { recursive: true, withFileTypes: true })) if (e.isFile()) bytes += statSync(join(e.parentPath ?? e.path, e.name)).size;
      const scripts = (JSON.parse(readFileSync(join(modules, p, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
      expect(Object.keys(scripts).filter((s) => /^(pre|post)?install$/.test(s)), p).toEqual([]);
    }
    console.log(`[verify package] ${(bytes / 1e6).toFixed(2)} MB installed`);
    expect(bytes).toBeLessThanOrEqual(5_000_000);
  });

  it("its files import jose and each other only (no server file), and it exports what portcullis/verify does", async () => {
    const dist = join(app, "node_modules/@portcullis/verify/dist");
    for (const e of readdirSync(dist, { recursive: true, withFileTypes: true })) {
      if (!e.isFile()) continue;
      const text = readFileSync(join(e.parentPath ?? e.path, e.name), "utf8");
      const imports = [...text.matchAll(/\b(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((m) => m[1]!);
      expect(imports.filter((i) => i !== "jose" && !/^\.\/[^/]+\.js$/.test(i)), e.name).toEqual([]);
    }
    const probe = await run(process.execPath, ["--input-type=module", "-e", `console.log(JSON.stringify(Object.keys(await import("@portcullis/verify")).sort()))`], app);
    expect(probe.code, probe.stderr).toBe(0);
    expect(JSON.parse(probe.stdout)).toEqual(Object.keys(sourceEntry).sort());
  });

  it("a 30-line resource server under a strict tsconfig type-checks reading ≤ 60 files, and verifies a token from GET /token", async () => {
    expect(APP.trimEnd().split("\n").length).toBe(30);
    writeFileSync(join(app, "app.ts"), APP);
    const tsconfig = { compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noUncheckedIndexedAccess: true, skipLibCheck: false, lib: ["ES2022", "DOM"], types: [], outDir: "out" }, files: ["app.ts"] };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const tsc = await run(process.execPath, [TSC, "-p", "tsconfig.json", "--listFiles", "--pretty", "false"], app);
    expect(tsc.code, tsc.stdout).toBe(0);
    const read = tsc.stdout.split("\n").map((l) => l.trim()).filter((l) => /\.d?\.?[cm]?ts$/.test(l));
    // TypeScript's own lib files are every app's, whatever it imports
    const files = read.filter((f) => !f.includes("/typescript/lib/"));
    console.log(`[verify package] tsc read ${files.length} files besides TypeScript's ${read.length - files.length} lib files`);
    expect(files.length, files.join("\n")).toBeLessThanOrEqual(60);
    expect(files.filter((f) => !f.includes("/node_modules/jose/") && !f.includes("/node_modules/@portcullis/verify/") && !f.endsWith("/app.ts"))).toEqual([]);

    const email = `verify.${Date.now()}@example.test`;
    const up = await postJson(`${server.auth}/sign-up/email`, { name: "Verify", email, password: "verify-package-pw-1" });
    expect(up.status).toBe(200);
    const minted = await getJson(`${server.auth}/token`, { authorization: `Bearer ${up.body.token}` });
    expect(minted.status).toBe(200);
    const ran = await run(process.execPath, ["out/app.js"], app, { ISSUER, PORTCULLIS_URL: server.url, TOKEN: minted.body.token });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({
      valid: { status: 200, body: { sub: up.body.user.id, email, role: "user", sid: "string" } },
      forged: { status: 401, body: { reason: "ERR_JWS_SIGNATURE_VERIFICATION_FAILED" } },
      garbage: { status: 401, body: { reason: "ERR_JWS_INVALID" } },
    });
  }, 120_000);
});
