import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { freePort } from "./harness.ts";
import { finish, killChildren, runCli, waitForStatus } from "./cli-run.ts";

/**
 * As an operator turns tracing on (docs/operations.md "Tracing"): `OTEL_TRACES_EXPORTER=console`
 * prints each span to stdout (the SDK's ConsoleSpanExporter) beside the JSON log lines; an
 * exporter name we do not ship stops the start with a message.
 */

const databases: TestDatabase[] = [];
afterAll(async () => {
  killChildren();
  await Promise.all(databases.map((d) => d.drop()));
});

describe(`OTEL_TRACES_EXPORTER on serve (${testDialect})`, { timeout: 120_000 }, () => {
  it("console: the request's span and its procedure's reach stdout, with the route and the service name, without the token", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const port = await freePort();
    const r = runCli(["serve"], { DATABASE_URL: db.url, PORT: String(port), OTEL_TRACES_EXPORTER: "console", OTEL_SERVICE_NAME: "auth-under-test" });
    const base = `http://127.0.0.1:${port}/api/auth`;
    await waitForStatus(r, `${base}/ready`);
    const up = await fetch(`${base}/sign-up/email`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Traced", email: "traced@example.test", password: "traced-password-1" }),
    });
    expect(up.status).toBe(200);
    const token = up.headers.get("set-auth-token")!;
    r.child.kill("SIGTERM");
    await finish(r);
    const out = r.stdout();
    expect(out).toContain("'http.route': '/sign-up/email'");
    expect(out).toContain("name: 'POST /sign-up/email'");
    expect(out).toContain("name: 'mutation signUp.email'");
    expect(out).toContain("'service.name': 'auth-under-test'");
    expect(out).not.toContain(token);
    expect(out).not.toContain("traced-password-1");
  });

  it("an exporter we do not ship stops the start with a message", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const r = runCli(["serve"], { DATABASE_URL: db.url, PORT: String(await freePort()), OTEL_TRACES_EXPORTER: "zipkin" });
    const { code } = await finish(r);
    expect(code).not.toBe(0);
    expect(r.stdout() + r.stderr()).toContain('OTEL_TRACES_EXPORTER: "zipkin" is not supported here');
  });
});
