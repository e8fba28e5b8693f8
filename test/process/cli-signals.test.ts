import { readFileSync } from "node:fs";
import { connect } from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "../harness/database.ts";
import { freePort } from "./harness.ts";
import { CLI_SECRET, cliEnv, finish, killChildren, logLines, REPO, runCli, spawnRun, waitForStatus } from "./cli-run.ts";

/**
 * SIGTERM reaches the server through `npm start`, and stops it gracefully: no new
 * connections, the request in flight answered, the database closed, exit 0.
 */

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const databases: TestDatabase[] = [];
/** Server processes seen (a failed test may leave one orphaned below npm). */
const serverPids: number[] = [];
afterAll(async () => {
  killChildren();
  for (const pid of serverPids) if (alive(pid)) process.kill(pid, "SIGKILL");
  await Promise.all(databases.map((d) => d.drop()));
});

async function freshDatabase(): Promise<TestDatabase> {
  const db = await createTestDatabase();
  databases.push(db);
  return db;
}

/** Field 4 of /proc/<pid>/stat (after the parenthesised name, which may hold spaces). */
const parentOf = (pid: number) => Number(readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")[1]);

async function until(check: () => boolean, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return check();
}

const refused = (url: string) => fetch(url, { signal: AbortSignal.timeout(2000) }).then(() => false, () => true);

describe("npm start", { timeout: 180_000 }, () => {
  it("SIGTERM to npm (the top of the tree) stops the server: it exits and the port closes", async () => {
    const db = await freshDatabase();
    const port = await freePort();
    const npm = spawnRun("npm", ["start", "--silent"], { cwd: REPO, env: cliEnv({ PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET }) });
    const base = `http://127.0.0.1:${port}/api/auth`;
    await waitForStatus(npm, `${base}/ready`, 200, 150_000);
    const pid = logLines(npm.stdout()).find((l) => l.msg === "portcullis listening")?.pid as number;
    expect(pid).toBeGreaterThan(0);
    serverPids.push(pid);
    // The compiled entry runs directly under npm: no shell (or tsx) in between to swallow the signal.
    expect(parentOf(pid)).toBe(npm.child.pid);

    npm.child.kill("SIGTERM");
    await finish(npm, 30_000);
    expect(await until(() => !alive(pid), 15_000), `server ${pid} still running`).toBe(true);
    expect(await refused(`${base}/ok`)).toBe(true);
    const logs = logLines(npm.stdout()).map((l) => l.msg);
    expect(logs).toEqual(expect.arrayContaining(["portcullis stopping: finishing requests in flight", "portcullis stopped"]));
  });
});

describe("graceful shutdown on SIGTERM", { timeout: 120_000 }, () => {
  it("a request in flight is answered, new connections are refused, then the process exits 0", async () => {
    const db = await freshDatabase();
    const port = await freePort();
    const r = runCli(["serve"], { PORT: String(port), DATABASE_URL: db.url, AUTH_SECRET: CLI_SECRET });
    const base = `http://127.0.0.1:${port}/api/auth`;
    await waitForStatus(r, `${base}/ready`);

    // A sign-up whose body is only half sent when the signal arrives.
    const body = JSON.stringify({ name: "Inflight", email: "inflight@example.test", password: "inflight-password-1" });
    const socket = connect(port, "127.0.0.1");
    await new Promise<void>((ok) => socket.once("connect", () => ok()));
    let answer = "";
    socket.on("data", (d: Buffer) => (answer += d.toString()));
    const ended = new Promise<void>((ok) => socket.once("close", () => ok()));
    const half = Math.floor(body.length / 2);
    socket.write(`POST /api/auth/sign-up/email HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body.slice(0, half)}`);
    await new Promise((w) => setTimeout(w, 300));

    r.child.kill("SIGTERM");
    // Past the drain's idle grace (500 ms): the connection with a request under way stays open.
    expect(await until(() => r.stdout().includes("portcullis stopping"), 5000)).toBe(true);
    await new Promise((w) => setTimeout(w, 800));
    expect(await refused(`${base}/ok`)).toBe(true);
    expect(r.child.exitCode).toBeNull();

    socket.write(body.slice(half));
    await ended; // the server closes the connection once it has answered
    const [head, json] = answer.split("\r\n\r\n");
    expect(head).toMatch(/^HTTP\/1\.1 200 /);
    expect(JSON.parse(json!).user.email).toBe("inflight@example.test");

    expect(await finish(r, 30_000)).toEqual({ code: 0, signal: null });
    const msgs = logLines(r.stdout()).map((l) => l.msg);
    expect(msgs.indexOf("portcullis stopped")).toBeGreaterThan(msgs.indexOf("portcullis stopping: finishing requests in flight"));
  });
});
