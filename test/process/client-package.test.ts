import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateAppRouterDeclarations, GENERATED } from "../../scripts/client-types.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/**
 * The light client, `@portcullis/client` (packages/client; docs/getting-started.md "The light
 * client"): packed as a publish would, installed into an empty app. The targets: at most 10
 * packages and 5 MB installed (typescript aside: a peer of @trpc/client's that a TypeScript app
 * has already), no install scripts, and a 30-line app under a strict tsconfig type-checks reading
 * at most 60 files (besides TypeScript's own lib files, the same for every app); its declarations import nothing of the server (they are generated, and must
 * be up to date). The app then runs against a service.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const TSC = join(ROOT, "node_modules/typescript/bin/tsc");

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

/** 30 lines, as an app that only calls the service writes them. */
const APP = `import { authErrorCode, createPortcullisClient, type PublicUser, type RouterInputs } from "@portcullis/client";

const env = (globalThis as { process?: { env: Record<string, string | undefined> } }).process?.env;
const url = env?.PORTCULLIS_URL ?? "http://127.0.0.1:3000";
const email = \`light.\${Date.now()}@example.test\`;
const signUp: RouterInputs["signUp"]["email"] = { name: "Light", email, password: "light-client-password-1" };

const anon = createPortcullisClient({ url });
const up = await anon.signUp.email.mutate(signUp);
if (up.token === null) throw new Error("no session");

const me = createPortcullisClient({ url, token: up.token });
const user: PublicUser | undefined = (await me.getSession.query())?.user;

let wrong: string | undefined;
try {
  await anon.signIn.email.mutate({ email, password: "not-the-password" });
} catch (err) {
  wrong = authErrorCode(err);
}

const signedIn = await anon.signIn.email.mutate({ email, password: signUp.password });
const twoFactor = "twoFactorRedirect" in signedIn;
const sessions = await me.listSessions.query();

const result = { email: user?.email, wrong, twoFactor, sessions: sessions.length };
console.log(JSON.stringify(result));
// @ts-expect-error: no such procedure
void anon.noSuchProcedure;
export {};
`;

let work: string;
let app: string;
let server: TestServer;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), "pc-light-"));
  const pack = await run("npm", ["pack", "--pack-destination", work, "--json"], join(ROOT, "packages/client"));
  expect(pack.code, pack.stderr).toBe(0);
  const [info] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf("[\n"))) as { filename: string; files: { path: string }[] }[];
  expect(info!.files.map((f) => f.path).sort()).toEqual(["dist/app-router.d.ts", "dist/core.d.ts", "dist/core.js", "dist/index.d.ts", "dist/index.js", "package.json"]);
  app = join(work, "app");
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), JSON.stringify({ name: "light-app", private: true, type: "module" }));
  const install = await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", join(work, info!.filename)], app);
  expect(install.code, install.stderr).toBe(0);
  server = await startTestServer();
}, 240_000);

afterAll(async () => {
  await server?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("@portcullis/client, packed and installed into an empty app", () => {
  it("its router declarations are generated from the current router (scripts/client-types.ts)", () => {
    expect(readFileSync(GENERATED, "utf8"), "stale: run npx tsx scripts/client-types.ts").toBe(generateAppRouterDeclarations());
  }, 60_000);

  it("≤ 10 packages, ≤ 5 MB, no install scripts (typescript, the app's own, aside)", () => {
    const modules = join(app, "node_modules");
    const packages = readdirSync(modules).flatMap((name) => (name.startsWith("@") ? readdirSync(join(modules, name)).map((n) => `${name}/${n}`) : name.startsWith(".") ? [] : [name]));
    // typescript (a peer of @trpc/client's) and its platform binary packages are the app's own compiler
    const ours = packages.filter((p) => p !== "typescript" && !p.startsWith("@typescript/"));
    console.log(`[light client] packages: ${ours.join(", ")}`);
    expect(ours.length).toBeLessThanOrEqual(10);
    expect(ours).toEqual(expect.arrayContaining(["@portcullis/client", "@trpc/client", "@trpc/server"]));
    let bytes = 0;
    for (const p of ours) {
      for (const e of readdirSync(join(modules, p), { recursive: true, withFileTypes: true })) if (e.isFile()) bytes += statSync(join(e.parentPath ?? e.path, e.name)).size;
      const scripts = (JSON.parse(readFileSync(join(modules, p, "package.json"), "utf8")) as { scripts?: Record<string, string> }).scripts ?? {};
      expect(Object.keys(scripts).filter((s) => /^(pre|post)?install$/.test(s)), p).toEqual([]);
    }
    console.log(`[light client] ${(bytes / 1e6).toFixed(2)} MB installed`);
    expect(bytes).toBeLessThanOrEqual(5_000_000);
  });

  it("its declarations name no server file, zod or MikroORM", () => {
    const dts = readdirSync(join(app, "node_modules/@portcullis/client/dist")).filter((f) => f.endsWith(".d.ts"));
    for (const f of dts) {
      const text = readFileSync(join(app, "node_modules/@portcullis/client/dist", f), "utf8");
      const imports = [...text.matchAll(/^(?:import|export)\b[^\n]*?\bfrom\s+["']([^"']+)["']/gm)].map((m) => m[1]!);
      expect(imports.filter((i) => !i.startsWith("./") && !i.startsWith("@trpc/")), f).toEqual([]);
    }
  });

  it("a 30-line app under a strict tsconfig type-checks reading ≤ 60 files, and runs against the service", async () => {
    expect(APP.trimEnd().split("\n").length).toBe(30);
    writeFileSync(join(app, "app.ts"), APP);
    const tsconfig = { compilerOptions: { target: "ES2022", module: "nodenext", moduleResolution: "nodenext", strict: true, noUncheckedIndexedAccess: true, skipLibCheck: false, lib: ["ES2022", "ESNext.Disposable", "DOM"], types: [], outDir: "out" }, files: ["app.ts"] };
    writeFileSync(join(app, "tsconfig.json"), JSON.stringify(tsconfig));
    const tsc = await run(process.execPath, [TSC, "-p", "tsconfig.json", "--listFiles", "--pretty", "false"], app);
    expect(tsc.code, tsc.stdout).toBe(0);
    const read = tsc.stdout.split("\n").map((l) => l.trim()).filter((l) => /\.d?\.?[cm]?ts$/.test(l));
    // TypeScript's own lib files (es2015.core ... dom: 58 with this lib setting) are every app's, whatever it imports
    const files = read.filter((f) => !f.includes("/typescript/lib/"));
    console.log(`[light client] tsc read ${files.length} files besides TypeScript's ${read.length - files.length} lib files:\n  ${files.join("\n  ")}`);
    expect(files.length, files.join("\n")).toBeLessThanOrEqual(60);
    expect(files.filter((f) => /portcullis\/(src|dist\/src)|@mikro-orm|zod/.test(f))).toEqual([]);
    const ran = await run(process.execPath, ["out/app.js"], app, { PORTCULLIS_URL: server.url });
    expect(ran.code, ran.stderr).toBe(0);
    expect(JSON.parse(ran.stdout)).toEqual({ email: expect.stringMatching(/^light\.\d+@example\.test$/), wrong: "INVALID_EMAIL_OR_PASSWORD", twoFactor: false, sessions: 2 });
  }, 120_000);
});
