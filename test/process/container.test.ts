import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { freePort } from "./harness.ts";
import { finish, killChildren, spawnRun, waitForStatus } from "./cli-run.ts";

/**
 * The container recipe (Dockerfile, compose.yaml; docs/deploying.md "Container"). No image can be
 * built here (no daemon, no registry), so this checks what can be: the shape (two stages, the
 * production install, a non-root user, an exec-form entrypoint, a healthcheck on /ready), that
 * every file it copies exists, and that the runtime stage's own steps, replayed in an empty
 * directory (its COPY lines, its `npm ci --omit=dev`, its ENV, ENTRYPOINT and CMD), start a
 * service whose HEALTHCHECK command then passes.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const dockerfile = readFileSync(join(ROOT, "Dockerfile"), "utf8");
/** Instructions, continuation lines joined, comments dropped. */
const instructions = dockerfile
  .replace(/\\\n/g, " ")
  .split("\n")
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith("#"))
  .map((l) => ({ op: l.split(/\s+/, 1)[0]!.toUpperCase(), args: l.slice(l.split(/\s+/, 1)[0]!.length).trim() }));
const stages = instructions.reduce<{ name: string; steps: typeof instructions }[]>((acc, i) => {
  if (i.op === "FROM") acc.push({ name: /\bAS\s+(\S+)/i.exec(i.args)?.[1] ?? "", steps: [] });
  else acc.at(-1)!.steps.push(i);
  return acc;
}, []);
const runtime = stages.at(-1)!;
const stepsOf = (op: string) => runtime.steps.filter((s) => s.op === op);

/**
 * better-sqlite3's install script fetches its prebuilt binary (prebuild-install), as an image
 * build with network access does, and compiles SQLite from source (~2 minutes of CPU) only when
 * that fails, as it does here, offline. Its `local_prebuilds` setting serves it this checkout's
 * binary, built for the same Node ABI, packed as the release asset it would have downloaded.
 */
function localSqlitePrebuild(dir: string): Record<string, string> {
  const pkg = join(ROOT, "node_modules/better-sqlite3");
  if (!existsSync(join(pkg, "build/Release/better_sqlite3.node"))) return {};
  const { version } = JSON.parse(readFileSync(join(pkg, "package.json"), "utf8")) as { version: string };
  const prebuilds = join(dir, "prebuilds");
  mkdirSync(prebuilds, { recursive: true });
  const asset = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  const tar = spawnSync("tar", ["-czf", join(prebuilds, asset), "-C", pkg, "build/Release/better_sqlite3.node"]);
  return tar.status === 0 ? { npm_config_better_sqlite3_local_prebuilds: prebuilds } : {};
}

let work: string | undefined;
afterAll(() => {
  killChildren();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe("the container recipe", () => {
  it("is multi-stage, installs production dependencies only, runs as a non-root user, exec-form entrypoint, healthcheck on /ready", () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(stepsOf("RUN").some((s) => /\bnpm ci\b.*--omit=dev/.test(s.args))).toBe(true);
    const user = stepsOf("USER").at(-1)?.args;
    expect(user).toBeDefined();
    expect(user).not.toMatch(/^(root|0)(:|$)/);
    const entrypoint = JSON.parse(stepsOf("ENTRYPOINT").at(-1)!.args) as string[]; // exec form: a JSON array, no shell
    expect(entrypoint[0]).toBe("node");
    expect(JSON.parse(stepsOf("CMD").at(-1)!.args)).toEqual(["serve"]);
    const health = stepsOf("HEALTHCHECK").at(-1)!.args;
    expect(health).toContain("/api/auth/ready");
    const compose = readFileSync(join(ROOT, "compose.yaml"), "utf8");
    expect(compose).toMatch(/image: postgres:/);
    expect(compose).toMatch(/DATABASE_URL: postgres:\/\//);
    expect(compose).toMatch(/condition: service_healthy/);
  });

  it("every file a stage copies from the checkout exists (dist/ is the build stage's)", () => {
    for (const stage of stages) {
      for (const copy of stage.steps.filter((s) => s.op === "COPY" && !s.args.startsWith("--from"))) {
        const sources = copy.args.split(/\s+/).slice(0, -1);
        for (const source of sources) expect(existsSync(join(ROOT, source)), `${stage.name}: COPY ${source}`).toBe(true);
      }
    }
    const fromBuild = runtime.steps.filter((s) => s.op === "COPY" && s.args.startsWith("--from=build"));
    expect(fromBuild.map((s) => s.args.split(/\s+/)[1])).toEqual(["/app/dist"]);
    expect(existsSync(join(ROOT, "dist/src/cli.js"))).toBe(true); // what the build stage's `npm ci` (prepare) leaves
  });

  it("the runtime stage's production install, replayed here, starts the service and passes its healthcheck", async () => {
    work = mkdtempSync(join(tmpdir(), "pc-container-"));
    const app = join(work, "app");
    mkdirSync(app);
    for (const copy of stepsOf("COPY")) {
      const parts = copy.args.split(/\s+/);
      const from = parts[0]!.startsWith("--from") ? parts.slice(1) : parts;
      const dest = from.at(-1)!;
      for (const source of from.slice(0, -1)) {
        const src = source === "/app/dist" ? join(ROOT, "dist") : join(ROOT, source);
        const target = dest.endsWith("/") ? join(app, dest, source.split("/").at(-1)!) : join(app, dest === "./" ? source : dest);
        cpSync(src, target, { recursive: true });
      }
    }
    // The install step as written (the image's `npm cache clean` left out; offline first: the test machine's cache).
    const install = stepsOf("RUN").find((s) => /\bnpm ci\b/.test(s.args))!.args.split("&&")[0]!.trim().split(/\s+/);
    const ran = spawnRun(install[0]!, [...install.slice(1), "--prefer-offline"], { cwd: app, env: { ...process.env, NODE_ENV: "production", ...localSqlitePrebuild(work) } });
    const { code } = await finish(ran, 400_000);
    expect(code, ran.stderr()).toBe(0);
    expect(existsSync(join(app, "node_modules/vitest"))).toBe(false); // no dev dependencies
    expect(existsSync(join(app, "src"))).toBe(false);

    const env: Record<string, string> = {};
    for (const line of stepsOf("ENV")) for (const [, k, v] of line.args.matchAll(/(\w+)=(\S+)/g)) env[k!] = v!;
    const data = join(work, "data");
    mkdirSync(data);
    const port = await freePort();
    const entry = [...JSON.parse(stepsOf("ENTRYPOINT").at(-1)!.args), ...JSON.parse(stepsOf("CMD").at(-1)!.args)] as string[];
    const server = spawnRun(entry[0] === "node" ? process.execPath : entry[0]!, entry.slice(1), {
      cwd: app,
      env: { PATH: process.env.PATH ?? "", ...env, HOST: "127.0.0.1", PORT: String(port), DATABASE_URL: `sqlite:${join(data, "portcullis.db")}`, AUTH_SECRET: "container-test-secret-container-test-secret-0123" },
    });
    await waitForStatus(server, `http://127.0.0.1:${port}/api/auth/ready`, 200, 90_000);
    const health = JSON.parse(/CMD\s+(\[.*\])\s*$/.exec(stepsOf("HEALTHCHECK").at(-1)!.args)![1]!) as string[];
    const check = spawnRun(process.execPath, health.slice(1), { cwd: app, env: { PATH: process.env.PATH ?? "", PORT: String(port) } });
    expect((await finish(check, 10_000)).code).toBe(0);
    server.child.kill("SIGTERM");
    const exit = await finish(server, 20_000);
    expect(exit.code).toBe(0); // SIGTERM reaches node: it drains and exits cleanly
  }, 600_000);
});
