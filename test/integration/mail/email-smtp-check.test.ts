/**
 * SMTP checked at start: nodemailer's verify() against a real SMTP server
 * (test/harness/smtp.ts). In production a server that does not answer, or refuses the
 * credentials, stops the start with a ConfigError naming email.smtpUrl (the CLI prints it as one
 * line); in development it is a warning and the service starts.
 */
import { createServer } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "../../../src/config/index.ts";
import { createPortcullis } from "../../../src/index.ts";
import { post, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { createTestDatabase, type TestDatabase } from "../../harness/database.ts";
import { startTestServer } from "../../harness/server.ts";
import { startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

const SECRET = "test-secret-test-secret-test-secret-0123";

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}

let sink: SmtpSink;
let db: TestDatabase;
const env = process.env.NODE_ENV;
beforeAll(async () => {
  sink = await startSmtpSink();
  db = await createTestDatabase();
});
afterAll(async () => {
  await sink?.close();
  await db?.drop();
});
afterEach(() => {
  process.env.NODE_ENV = env;
});

async function startFailure(smtpUrl: string): Promise<unknown> {
  try {
    const started = await createPortcullis({ databaseUrl: db.url, secret: SECRET, logLevel: "silent", email: { smtpUrl } });
    await started.close();
    return null;
  } catch (err) {
    return err;
  }
}

describe("SMTP at start, in production", () => {
  it("a server that answers: the service starts and mails go out", async () => {
    process.env.NODE_ENV = "production";
    const server = await startTestServer({ email: { smtpUrl: sink.url } });
    try {
      const email = uniqueEmail("prod-smtp");
      expect((await post(`${server.auth}/sign-up/email`, { name: "P", email, password: "password123" })).status).toBe(200);
      expect((await post(`${server.auth}/request-password-reset`, { email })).status).toBe(200);
      expect((await sink.waitFor((m) => m.to.includes(email))).subject).toBe("Reset your password");
    } finally {
      await server.close();
    }
  });

  it("nothing listening: the start fails with a ConfigError naming email.smtpUrl", async () => {
    process.env.NODE_ENV = "production";
    const port = await closedPort();
    const err = await startFailure(`smtp://127.0.0.1:${port}`);
    expect(err).toBeInstanceOf(ConfigError);
    const issues = (err as ConfigError & { issues: { key: string; message: string }[] }).issues;
    expect(issues).toEqual([{ key: "email.smtpUrl", message: `nothing accepts connections at smtp://127.0.0.1:${port} (connection refused)` }]);
  });

  it("credentials the server refuses: the start fails, and the password is never in the message", async () => {
    process.env.NODE_ENV = "production";
    const url = new URL(sink.url);
    url.username = "mailer";
    url.password = "s3cret-smtp-password";
    const err = (await startFailure(url.toString())) as ConfigError;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/email\.smtpUrl: the SMTP server at smtp:\/\/mailer:\*\*\*@127\.0\.0\.1:\d+ refused the credentials/);
    expect(err.message).not.toContain("s3cret-smtp-password");
  });
});

describe("SMTP at start, in development", () => {
  it("nothing listening: a warning naming email.smtpUrl, and the service starts", async () => {
    const log = captureLog("info");
    const port = await closedPort();
    const server = await startTestServer({ email: { smtpUrl: `smtp://127.0.0.1:${port}` } }, { logger: log.logger });
    try {
      expect((await fetch(`${server.auth}/ok`)).status).toBe(200);
      await expect.poll(() => log.lines().find((l) => l.key === "email.smtpUrl"), { timeout: 10_000 }).toMatchObject({
        level: 40,
        msg: `email.smtpUrl: nothing accepts connections at smtp://127.0.0.1:${port} (connection refused); mails will fail until it answers`,
      });
    } finally {
      await server.close();
    }
  });

  it("a send hook and an SMTP URL: the hook wins, said once at start", async () => {
    const log = captureLog("info");
    const server = await startTestServer({ email: { smtpUrl: sink.url, send: () => {} } }, { logger: log.logger });
    try {
      expect(server.portcullis.app.mailer.route).toBe("hook");
      expect(log.lines().filter((l) => l.msg.startsWith("email.send is set"))).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
