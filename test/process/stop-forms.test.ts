import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../harness/database.ts";
import { freePort } from "./harness.ts";
import { BIN, CLI_SECRET, cliEnv, logLines, REPO, spawnRun, waitForStatus, type Run } from "./cli-run.ts";

/**
 * Every documented way to run the service (docs/operations.md, Shutdown) stops within 10 s when
 * the process a process manager holds gets SIGTERM, and on Ctrl-C (SIGINT to the whole process
 * group, as a terminal sends it). Each form is started in a process group of its own; the server
 * is the process that logged "portcullis listening", whatever npm, sh or tsx stand above it.
 */

const STOP_WITHIN_MS = 10_000;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

const refused = (url: string) => fetch(url, { signal: AbortSignal.timeout(2000) }).then(() => false, () => true);

const databases: TestDatabase[] = [];
const groups: number[] = [];
const serverPids: number[] = [];
const dirs: string[] = [];
afterAll(async () => {
  for (const pgid of groups) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {
      // the group is gone
    }
  }
  for (const pid of serverPids) if (alive(pid)) process.kill(pid, "SIGKILL");
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  await Promise.all(databases.map((d) => d.drop()));
});

/** An app that depends on portcullis, as `npm install portcullis` leaves it: node_modules/portcullis and its bin. */
function appDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "pc-app-"));
  dirs.push(dir);
  writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "app", private: true, dependencies: { portcullis: `file:${REPO}` } }));
  mkdirSync(join(dir, "node_modules", ".bin"), { recursive: true });
  symlinkSync(REPO, join(dir, "node_modules", "portcullis"));
  symlinkSync("../portcullis/bin/portcullis.cjs", join(dir, "node_modules", ".bin", "portcullis"));
  return dir;
}

interface Form {
  name: string;
  command: string;
  args: string[];
  cwd: () => string;
  /** Ctrl-C under `npm run dev`: npm passes the terminal's SIGINT on to tsx watch, which then kills its child outright. */
  gracefulOnCtrlC: boolean;
}

const FORMS: Form[] = [
  { name: "npm start", command: "npm", args: ["start", "--silent"], cwd: () => REPO, gracefulOnCtrlC: true },
  { name: "npx portcullis serve", command: "npx", args: ["--offline", "portcullis", "serve"], cwd: appDir, gracefulOnCtrlC: true },
  { name: "npm run dev", command: "npm", args: ["run", "dev", "--silent"], cwd: () => REPO, gracefulOnCtrlC: false },
  { name: "node bin/portcullis.cjs serve", command: process.execPath, args: [BIN, "serve"], cwd: () => tmpdir(), gracefulOnCtrlC: true },
];

async function start(form: Form): Promise<{ run: Run; serverPid: number; base: string }> {
  const db = await createTestDatabase();
  databases.push(db);
  const port = await freePort();
  const run = spawnRun(form.command, form.args, {
    cwd: form.cwd(),
    env: cliEnv({ PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET }),
    detached: true, // a process group of its own, like a shell's job
  });
  groups.push(run.child.pid!);
  const base = `http://127.0.0.1:${port}/api/auth`;
  await waitForStatus(run, `${base}/ready`, 200, 150_000);
  const serverPid = logLines(run.stdout()).find((l) => l.msg === "portcullis listening")?.pid as number;
  expect(serverPid).toBeGreaterThan(0);
  serverPids.push(serverPid);
  return { run, serverPid, base };
}

describe("every documented way to run it stops on a signal", { timeout: 240_000 }, () => {
  for (const form of FORMS) {
    for (const way of ["SIGTERM to the top process", "Ctrl-C (SIGINT to the process group)"] as const) {
      it(`${form.name}: ${way}`, async () => {
        const { run, serverPid, base } = await start(form);
        const top = run.child.pid!;
        const sent = Date.now();
        if (way === "SIGTERM to the top process") process.kill(top, "SIGTERM");
        else process.kill(-top, "SIGINT");

        const stopped = await until(() => !alive(serverPid) && run.child.exitCode !== null || run.child.signalCode !== null && !alive(serverPid), STOP_WITHIN_MS);
        expect(stopped, `after ${Date.now() - sent} ms: server ${serverPid} ${alive(serverPid) ? "still running" : "gone"}, top ${top} ${run.child.exitCode ?? run.child.signalCode ?? "still running"}\n${run.stdout()}\n${run.stderr()}`).toBe(true);
        expect(await refused(`${base}/ok`)).toBe(true);
        if (way === "SIGTERM to the top process" || form.gracefulOnCtrlC) {
          // Drained, not cut off: the server said so (the last lines may trail the top process's exit).
          expect(await until(() => run.stdout().includes('"msg":"portcullis stopped"'), 2000), run.stdout()).toBe(true);
        }
      });
    }
  }
});

describe("outside npm", { timeout: 120_000 }, () => {
  it("a server a shell started in the background outlives that shell (nohup ... &)", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const port = await freePort();
    const env = cliEnv({ PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET });
    for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key];
    const dir = mkdtempSync(join(tmpdir(), "pc-bg-"));
    dirs.push(dir);
    const shell = spawnRun("sh", ["-c", `"${process.execPath}" "${BIN}" serve > "${join(dir, "log")}" 2>&1 &`], { cwd: dir, env, detached: true });
    groups.push(shell.child.pid!);
    expect((await shell.exited).code).toBe(0);
    const base = `http://127.0.0.1:${port}/api/auth`;
    await waitForStatus({ ...shell, exited: new Promise(() => undefined) }, `${base}/ready`, 200, 60_000);
    await new Promise((r) => setTimeout(r, 1500)); // several of bin/npm-parent.cjs's polls, were it watching
    expect((await fetch(`${base}/ok`)).status).toBe(200);
  });
});

describe("a second signal", { timeout: 120_000 }, () => {
  it("within a second of the first is the same stop; later, it ends a drain that waits at once (exit 1)", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const port = await freePort();
    const run = spawnRun(process.execPath, [BIN, "serve"], { cwd: tmpdir(), env: cliEnv({ PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET }) });
    await waitForStatus(run, `http://127.0.0.1:${port}/api/auth/ready`);
    // A request whose body never finishes: the drain waits for it (up to 10 s).
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((ok) => socket.once("connect", () => ok()));
    socket.on("error", () => undefined);
    socket.write(`POST /api/auth/sign-up/email HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n{"name":`);
    await new Promise((w) => setTimeout(w, 300));
    run.child.kill("SIGTERM");
    await new Promise((w) => setTimeout(w, 100));
    run.child.kill("SIGINT");
    await new Promise((w) => setTimeout(w, 1200));
    expect(run.child.exitCode, run.stdout()).toBeNull(); // still draining: the second signal was the first's copy
    const sent = Date.now();
    run.child.kill("SIGTERM");
    expect(await run.exited).toEqual({ code: 1, signal: null });
    expect(Date.now() - sent).toBeLessThan(2000);
    expect(logLines(run.stdout()).map((l) => l.msg)).toEqual(expect.arrayContaining(["portcullis stopping: finishing requests in flight", "second signal while stopping: exiting now"]));
    socket.destroy();
  });
});
