import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { freePort } from "./harness.ts";
import { finish, killChildren, logLines, runCli, waitForStatus } from "./cli-run.ts";

/**
 * As an operator runs it: JSON logs, LOG_LEVEL honoured, request ids in the lines,
 * and no secret in the output (the service secret, a provider secret, a database password,
 * passwords, session tokens).
 */

const databases: TestDatabase[] = [];
afterAll(async () => {
  killChildren();
  await Promise.all(databases.map((d) => d.drop()));
});

const SECRET = "log-test-service-secret-log-test-service-secret-01";
const PROVIDER_SECRET = "github-client-secret-never-logged";

/** On PostgreSQL a password in the URL (trust authentication ignores it), which must not be logged either. */
function withPassword(url: string): string {
  if (testDialect === "sqlite") return url;
  const u = new URL(url);
  u.password = "db-password-never-logged";
  return u.toString();
}

async function serve(level: string) {
  const db = await createTestDatabase();
  databases.push(db);
  const port = await freePort();
  const r = runCli(["serve"], {
    DATABASE_URL: withPassword(db.url),
    AUTH_SECRET: SECRET,
    PORT: String(port),
    LOG_LEVEL: level,
    GITHUB_CLIENT_ID: "gh-id",
    GITHUB_CLIENT_SECRET: PROVIDER_SECRET,
  });
  const base = `http://127.0.0.1:${port}/api/auth`;
  await waitForStatus(r, `${base}/ready`);
  return { r, base };
}

const json = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify(body) });

describe(`logs of serve (${testDialect})`, { timeout: 120_000 }, () => {
  it("LOG_LEVEL=debug: every line JSON, the caller's request id in its line, no secret anywhere", async () => {
    const { r, base } = await serve("debug");
    const password = "log-user-password-0815";
    const up = await json(`${base}/sign-up/email`, { name: "Logs", email: "logs@example.test", password }, { "x-request-id": "ops-trace-42" });
    expect(up.status).toBe(200);
    expect(up.headers.get("x-request-id")).toBe("ops-trace-42");
    const token = up.headers.get("set-auth-token")!;
    const session = await fetch(`${base}/get-session`, { headers: { authorization: `Bearer ${token}`, "x-request-id": "ops-trace-43" } });
    expect(session.status).toBe(200);
    expect((await json(`${base}/sign-in/email`, { email: "logs@example.test", password: "wrong-password-0815" })).status).toBe(401);
    r.child.kill("SIGTERM");
    expect(await finish(r)).toEqual({ code: 0, signal: null });

    const out = r.stdout();
    const lines = out.split("\n").filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line), line).not.toThrow();
    const logs = logLines(out);
    expect(logs.find((l) => l.requestId === "ops-trace-42")).toMatchObject({ msg: "request", route: "/sign-up/email", status: 200 });
    expect(logs.find((l) => l.requestId === "ops-trace-43")).toMatchObject({ msg: "request", route: "/get-session", status: 200 });
    const all = out + r.stderr();
    for (const secret of [SECRET, PROVIDER_SECRET, "db-password-never-logged", password, "wrong-password-0815", token]) {
      expect(all.includes(secret), `${secret.slice(0, 12)}... in the output`).toBe(false);
    }
  });

  it("LOG_LEVEL=warn: no info line, not even the start-up or request lines", async () => {
    const { r, base } = await serve("warn");
    expect((await json(`${base}/sign-up/email`, { name: "Quiet", email: "quiet@example.test", password: "quiet-password-1" })).status).toBe(200);
    r.child.kill("SIGTERM");
    expect(await finish(r)).toEqual({ code: 0, signal: null });
    const logs = logLines(r.stdout());
    expect(logs.filter((l) => l.level < 40)).toEqual([]);
  });
});
