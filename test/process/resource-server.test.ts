/**
 * docs/machine-access.md's resource server, in a process of its own under plain node, importing
 * the compiled `portcullis/verify`: it fetches the JWK Set once, then verifies every token
 * offline, the Portcullis service stopped included; it refuses a tampered token.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, uniqueEmail } from "../harness/http.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { freePort } from "./harness.ts";
import { probeHooksSource } from "./package-consumer.ts";

const ROOT = resolve(import.meta.dirname, "../..");

let server: TestServer;
let child: ChildProcess;
let port: number;
let jwksFetches = 0;

beforeAll(async () => {
  server = await startTestServer();
  port = await freePort();
  // Count the JWK Set fetches the resource server makes: a preload wraps its global fetch.
  const preload = join(ROOT, "test-output", `count-fetch-${process.pid}.mjs`);
  const { mkdirSync } = await import("node:fs");
  mkdirSync(join(ROOT, "test-output"), { recursive: true });
  writeFileSync(preload, `const f = globalThis.fetch; globalThis.fetch = (...a) => { process.stdout.write("JWKS_FETCH\\n"); return f(...a); };\n`);
  child = spawn(process.execPath, ["--import", preload, join(ROOT, "test/fixtures/resource-server.mjs")], {
    env: { ...process.env, ISSUER: "http://127.0.0.1:3000", JWKS_URL: `${server.auth}/jwks`, PORT: String(port) },
    stdio: ["ignore", "pipe", "inherit"],
  });
  child.stdout!.on("data", (chunk: Buffer) => (jwksFetches += chunk.toString().split("JWKS_FETCH").length - 1));
  for (let i = 0; i < 100; i++) {
    if (await fetch(`http://127.0.0.1:${port}/`).then(() => true, () => false)) break;
    await new Promise((r) => setTimeout(r, 100));
  }
});

afterAll(async () => {
  child?.kill("SIGKILL");
  await server?.close().catch(() => {});
});

const call = (jwt: string) => fetch(`http://127.0.0.1:${port}/orders`, { headers: { authorization: `Bearer ${jwt}` } });

describe("a resource server on portcullis/verify", () => {
  it("verifies offline after one JWK Set fetch, even with the service stopped", async () => {
    const email = uniqueEmail("rs");
    const up = await post(`${server.auth}/sign-up/email`, { name: "R", email, password: "password123" });
    const jwt = (await get(`${server.auth}/token`, { bearer: up.body.token })).body.token as string;
    const first = await call(jwt);
    expect(first.status).toBe(200);
    expect(await first.json()).toEqual({ hello: up.body.user.id, email });
    for (let i = 0; i < 5; i++) expect((await call(jwt)).status).toBe(200);
    await server.close();
    expect((await call(jwt)).status).toBe(200);
    expect(jwksFetches).toBe(1);
    const [head, payload, sig] = jwt.split(".");
    const tampered = `${head}.${Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(payload!, "base64url").toString()), role: "admin" })).toString("base64url")}.${sig}`;
    expect((await call(tampered)).status).toBe(401);
    expect((await call("not-a-token")).status).toBe(401);
  });
});

describe("portcullis/verify is a light entry", () => {
  it("loads jose and nothing of the server: no database driver, no tRPC, no native module", () => {
    const dir = join(ROOT, "test-output");
    const urls = join(dir, `verify-urls-${process.pid}.txt`);
    writeFileSync(urls, "");
    writeFileSync(join(dir, "probe-hooks.mjs"), probeHooksSource);
    const probe = join(dir, `verify-probe-${process.pid}.mjs`);
    writeFileSync(
      probe,
      `import { createRequire, register } from "node:module";\n` +
        `register("./probe-hooks.mjs", import.meta.url, { data: { out: ${JSON.stringify(urls)} } });\n` +
        `const v = await import("portcullis/verify");\n` +
        `const natives = process.report.getReport().sharedObjects.filter((f) => f.endsWith(".node"));\n` +
        `console.log(JSON.stringify({ exports: Object.keys(v).sort(), cjs: Object.keys(createRequire(import.meta.url).cache), natives }));\n`,
    );
    const run = spawnSync(process.execPath, [probe], { cwd: ROOT, encoding: "utf8" });
    expect(run.status, run.stderr).toBe(0);
    const { exports, cjs, natives } = JSON.parse(run.stdout) as { exports: string[]; cjs: string[]; natives: string[] };
    expect(exports).toEqual(["bearerChallenge", "createAccessTokenVerifier", "createVerifier", "errors", "protectedResourceMetadata", "protectedResourceMetadataPath"]);
    const loaded = [...readFileSync(urls, "utf8").split("\n").filter((u) => u.startsWith("file:")).map((u) => fileURLToPath(u)), ...cjs];
    const ours = loaded.filter((f) => f.startsWith(ROOT) && !f.includes("/node_modules/") && !f.includes("/test-output/")).map((f) => f.slice(ROOT.length + 1));
    expect(ours).toEqual(["dist/src/verify/index.js"]);
    const packages = new Set(loaded.map((f) => /\/node_modules\/((@[^/]+\/)?[^/]+)\//.exec(f)?.[1]).filter(Boolean));
    expect([...packages]).toEqual(["jose"]);
    expect(natives).toEqual([]);
  });
});
