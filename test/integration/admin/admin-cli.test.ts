import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type Portcullis } from "../../../src/index.ts";
import { createTestDatabase, type TestDatabase } from "../../harness/database.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import type { TestServer } from "../../harness/server.ts";
import { FakeClock } from "../../harness/clock.ts";
import { adminGet, adminPost, expectError, PASSWORD, signIn, signUp } from "../../harness/admin-helpers.ts";

const ROOT = resolve(import.meta.dirname, "../../..");

/**
 * Runs the real CLI (bin/portcullis.cjs) against the test database. Its standard input is a
 * pipe carrying `stdin` and then closed (create-admin reads a new admin's password from it).
 */
function cli(
  args: string[],
  databaseUrl: string,
  opts: { stdin?: string; env?: Record<string, string> } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      [resolve(ROOT, "bin/portcullis.cjs"), ...args],
      { cwd: ROOT, env: { ...process.env, PORTCULLIS_ADMIN_PASSWORD: "", DATABASE_URL: databaseUrl, PORTCULLIS_CONFIG: "", ...opts.env }, timeout: 60_000 },
      (err, stdout, stderr) => done({ code: err ? ((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
    child.stdin!.end(opts.stdin ?? "");
  });
}

let db: TestDatabase;
const running: Portcullis[] = [];

/** A server on the CLI's database (the harness makes a fresh database per server, so not used here). */
async function serve(config: Parameters<typeof createPortcullis>[0] = {}): Promise<TestServer> {
  const portcullis = await createPortcullis({
    databaseUrl: db.url,
    secret: "test-secret-test-secret-test-secret-0123",
    logLevel: "silent",
    clock: new FakeClock(),
    rateLimit: { enabled: false },
    ...config,
  });
  running.push(portcullis);
  const url = await portcullis.listen(0, "127.0.0.1");
  return { url, auth: `${url}/api/auth`, portcullis, clock: portcullis.app.clock as FakeClock, db, close: () => portcullis.close() };
}

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const p of running.splice(0)) await p.close().catch(() => {});
  await db?.drop();
});

/** The CLI-made admin (first test); the last test signs in as them too. */
const email = uniqueEmail("Boss");

describe("portcullis create-admin", () => {
  it("creates an admin on a fresh database (migrating it), who then signs in and administers", async () => {
    const run = await cli(["create-admin", "--email", email, "--password", PASSWORD, "--name", "The Boss"], db.url);
    expect(run.code, run.stderr).toBe(0);
    const id = run.stdout.trim();
    expect(id).toMatch(/^[0-9a-f-]{36}$/);

    const server = await serve();
    const boss = await signIn(server, email.toLowerCase());
    expect(boss.id).toBe(id);
    expect(boss.user).toMatchObject({ name: "The Boss", role: "admin", emailVerified: true });
    const list = await adminGet(server, "list-users", {}, boss.token);
    expect(list.status, list.text).toBe(200);
    expect(list.body.total).toBe(1);
    const events = await adminGet(server, "list-audit-events", {}, boss.token);
    // newest first: the admin's sign-in (core/sign-in-audit.ts), then the CLI's creation
    expect(events.body.events.map((e: { action: string }) => e.action)).toEqual(["sign-in", "create-admin"]);
    expect(events.body.events[1]).toMatchObject({ action: "create-admin", actorId: null, targetId: id, metadata: { promoted: false } });
    await server.close();
    running.pop();
  });

  it("promotes an existing user (role gains admin, password untouched)", async () => {
    const server = await serve();
    const member = await signUp(server);
    const run = await cli(["create-admin", "--email", member.email], db.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(member.id);
    const again = await signIn(server, member.email);
    expect(again.user.role).toBe("user,admin");
    expect((await adminGet(server, "list-users", { limit: 1 }, again.token)).status).toBe(200);
    // Running it twice changes nothing.
    expect((await cli(["create-admin", "--email", member.email], db.url)).code).toBe(0);
    expect((await get(`${server.auth}/get-session`, { bearer: again.token })).body.user.role).toBe("user,admin");
    await server.close();
    running.pop();
  });

  it("fails with exit code 1 and a message for bad input", async () => {
    const noPassword = await cli(["create-admin", "--email", uniqueEmail("nobody")], db.url);
    expect(noPassword.code).toBe(1);
    expect(noPassword.stderr).toMatch(/a password is required/);
    const short = await cli(["create-admin", "--email", uniqueEmail("short"), "--password", "short"], db.url);
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/PASSWORD_TOO_SHORT/);
    const noEmail = await cli(["create-admin", "--password", PASSWORD], db.url);
    expect(noEmail.code).toBe(1);
    expect(noEmail.stdout).toBe("");
  });
});

describe("create-admin keeps the password out of the process list", () => {
  it("reads a new admin's password from piped standard input (one trailing newline dropped), without a warning", async () => {
    const piped = uniqueEmail("piped");
    const password = "  piped password with spaces  ";
    const run = await cli(["create-admin", "--email", piped], db.url, { stdin: `${password}\n` });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/warning/i);
    const server = await serve();
    const admin = await signIn(server, piped, password);
    expect(admin.id).toBe(run.stdout.trim());
    expect(admin.user.role).toBe("admin");
    // The password is exactly what was piped: without the trailing newline, spaces kept.
    expect((await post(`${server.auth}/sign-in/email`, { email: piped, password: password.trim() })).status).toBe(401);
    await server.close();
    running.pop();
  });

  it("reads it from PORTCULLIS_ADMIN_PASSWORD (ahead of standard input)", async () => {
    const fromEnv = uniqueEmail("env");
    const run = await cli(["create-admin", "--email", fromEnv], db.url, { env: { PORTCULLIS_ADMIN_PASSWORD: "env password 123" }, stdin: "ignored stdin\n" });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).not.toMatch(/warning/i);
    const server = await serve();
    expect((await signIn(server, fromEnv, "env password 123")).user.role).toBe("admin");
    await server.close();
    running.pop();
  });

  it("--password still works but warns on stderr", async () => {
    const flagged = uniqueEmail("flag");
    const run = await cli(["create-admin", "--email", flagged, "--password", PASSWORD], db.url);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/warning: --password leaves the password in the process list/);
    expect(run.stdout.trim()).toMatch(/^[0-9a-f-]{36}$/);
    // Promoting an existing user asks for no password at all (stdin left unread).
    const again = await cli(["create-admin", "--email", flagged], db.url);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.trim()).toBe(run.stdout.trim());
  });

  it("an empty pipe or a too-short piped password fails cleanly with exit code 1", async () => {
    const empty = await cli(["create-admin", "--email", uniqueEmail("empty")], db.url, { stdin: "" });
    expect(empty.code).toBe(1);
    expect(empty.stderr).toMatch(/a password is required/);
    const short = await cli(["create-admin", "--email", uniqueEmail("short")], db.url, { stdin: "short\n" });
    expect(short.code).toBe(1);
    expect(short.stderr).toMatch(/PASSWORD_TOO_SHORT/);
  });
});

describe("admin.adminUserIds", () => {
  it("gives the listed users every permission of the admin role, and makes them admins for impersonation", async () => {
    let server = await serve();
    const chosen = await signUp(server);
    expectError(await adminGet(server, "list-users", {}, chosen.token), 403, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS");
    await server.close();
    running.pop();

    server = await serve({ admin: { adminUserIds: [chosen.id] } });
    expect(chosen.user.role).toBe("user");
    const list = await adminGet(server, "list-users", {}, chosen.token);
    expect(list.status, list.text).toBe(200);
    const ask = await adminPost(server, "has-permission", { permissions: { user: ["ban", "delete"], audit: ["list"] } }, chosen.token);
    expect(ask.body).toEqual({ success: true, error: null });
    const plain = await signUp(server);
    expect((await post(`${server.auth}/admin/ban-user`, { userId: plain.id }, { bearer: chosen.token })).status).toBe(200);
    // The CLI's admin may not impersonate them: they count as an admin.
    const boss = await signIn(server, email.toLowerCase());
    expectError(await adminPost(server, "impersonate-user", { userId: chosen.id }, boss.token), 403, "YOU_CANNOT_IMPERSONATE_ADMINS");
    await server.close();
    running.pop();
  });
});
