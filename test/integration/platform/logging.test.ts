import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAdmin } from "../../../src/modules/admin/bootstrap.service.ts";
import { testDialect } from "../../harness/database.ts";
import { cookieFrom, get, post, request, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

/**
 * Operations: structured JSON logs (pino), one line per request with request id,
 * method, route, status and duration, and never a token, password or code. A captured logger at
 * `trace` (everything, no redaction) sees a run through every secret-carrying flow; the log is
 * then searched for each secret value, raw and URL-encoded.
 *
 * SMTP is configured: without it the mailer writes each link (with its live token) to the log
 * on purpose, as the developer fallback of `npm start` (a warning in production).
 */

let server: TestServer;
let smtp: SmtpSink;
const log = captureLog("trace");
/** Every secret value the flows below handle. */
const secrets = new Map<string, string>();
let requests = 0;

function keep(label: string, value: string | null | undefined): string {
  expect(value, label).toBeTruthy();
  secrets.set(label, value!);
  return value!;
}

beforeAll(async () => {
  smtp = await startSmtpSink();
  server = await startTestServer(
    { email: { smtpUrl: smtp.url }, rateLimit: { enabled: true, storage: "database" }, trustProxy: true },
    { logger: log.logger },
  );
});

afterAll(async () => {
  await server?.close();
  await smtp?.close();
});

const json = (path: string, body: unknown, headers: Record<string, string> = {}) => {
  requests += 1;
  return post(`${server.auth}${path}`, body, { headers: { "x-forwarded-for": "192.0.2.7", ...headers } });
};

describe(`logs (${testDialect})`, () => {
  it("a run through every secret-carrying flow leaves no token, password or code in the log", async () => {
    const email = uniqueEmail("log");
    const password1 = keep("sign-up password", "first-Secret-pw-4711");
    const up = await json("/sign-up/email", { name: "Log", email, password: password1 });
    expect(up.status, up.text).toBe(200);
    keep("sign-up token", up.headers.get("set-auth-token"));
    const cookie = keep("session cookie", cookieFrom(up.headers));

    // sign-in: REST (a wrong password first) and tRPC
    keep("wrong password", "Wrong-secret-pw-0815");
    expect((await json("/sign-in/email", { email, password: secrets.get("wrong password") })).status).toBe(401);
    const signIn = await json("/sign-in/email", { email, password: password1 });
    const token = keep("sign-in token", signIn.headers.get("set-auth-token"));
    requests += 1;
    const viaTrpc = await request("POST", `${server.url}/api/trpc/signIn.email`, { json: { email, password: password1 } });
    expect(viaTrpc.status).toBe(200);
    keep("tRPC sign-in token", viaTrpc.headers.get("set-auth-token"));

    // sessions by bearer and by cookie
    requests += 2;
    expect((await get(`${server.auth}/get-session`, { bearer: token })).body.user.email).toBe(email);
    expect((await get(`${server.auth}/get-session`, { cookie })).body.user.email).toBe(email);

    // change-password
    const password2 = keep("new password", "second-Secret-pw-4712");
    const changed = await json("/change-password", { currentPassword: password1, newPassword: password2, revokeOtherSessions: true }, { authorization: `Bearer ${token}` });
    expect(changed.status, changed.text).toBe(200);
    keep("change-password token", changed.headers.get("set-auth-token"));

    // email verification: the token arrives by mail (before the reset, which verifies the address itself)
    expect((await json("/send-verification-email", { email })).status).toBe(200);
    const verifyMail = await smtp.waitFor((m) => m.to.includes(email) && m.text.includes("/verify-email"));
    const verifyToken = keep("verification token", new URL(linkFrom(verifyMail, "/verify-email")).searchParams.get("token"));
    requests += 1;
    const verified = await get(`${server.auth}/verify-email?token=${verifyToken}`);
    expect(verified.status, verified.text).toBeLessThan(400);

    // password reset: the token arrives by mail
    expect((await json("/request-password-reset", { email, redirectTo: "/reset" })).status).toBe(200);
    const resetMail = await smtp.waitFor((m) => m.to.includes(email) && m.text.includes("/reset-password/"));
    const resetToken = keep("reset token", /\/reset-password\/([^?\s]+)/.exec(linkFrom(resetMail, "/reset-password/"))![1]);
    requests += 1;
    expect((await get(`${server.auth}/reset-password/${resetToken}?callbackURL=/reset`)).status).toBe(302);
    const password3 = keep("reset password", "third-Secret-pw-4713");
    expect((await json("/reset-password", { token: resetToken, newPassword: password3 })).status).toBe(200);
    const fresh = await json("/sign-in/email", { email, password: password3 });
    const token2 = keep("post-reset token", fresh.headers.get("set-auth-token"));

    // device authorization: device code, user code, access token
    const code = await json("/device/code", { client_id: "log-tv" });
    expect(code.status, code.text).toBe(200);
    const deviceCode = keep("device code", code.body.device_code);
    const userCode = keep("user code", code.body.user_code);
    secrets.set("user code, normalized", userCode.replace("-", ""));
    const bearer2 = { authorization: `Bearer ${token2}` };
    requests += 1;
    expect((await get(`${server.auth}/device?user_code=${userCode}`, { headers: bearer2 })).status).toBe(200);
    expect((await json("/device/approve", { userCode }, bearer2)).status).toBe(200);
    const issued = await json("/device/token", { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: "log-tv" });
    expect(issued.status, issued.text).toBe(200);
    keep("device access token", issued.body.access_token);

    // admin: a new user's password, impersonation token
    await createAdmin(server.portcullis.app.orm.em.fork(), server.portcullis.app.config, { email });
    server.portcullis.app.sessionCache.evictUser(up.body.user.id);
    const adminPassword = keep("admin-set password", "fourth-Secret-pw-4714");
    const created = await json("/admin/create-user", { email: uniqueEmail("log-made"), password: adminPassword, name: "Made" }, bearer2);
    expect(created.status, created.text).toBe(200);
    const imp = await json("/admin/impersonate-user", { userId: created.body.user.id }, bearer2);
    expect(imp.status, imp.text).toBe(200);
    keep("impersonation token", imp.headers.get("set-auth-token") ?? imp.body.session?.token);

    // an error logged with its cause: the counter store fails during a sign-in
    await server.portcullis.app.orm.em.fork().getConnection().execute("drop table rate_limits");
    expect((await json("/sign-in/email", { email, password: password3 })).status).toBe(200);
    await server.portcullis.app.mailer.settle();

    const text = log.text;
    const lines = log.lines(); // every line is JSON
    expect(lines.some((l) => l.level === 50 && l.err && l.msg.startsWith("rate limit store failed"))).toBe(true);
    for (const [label, value] of secrets) {
      expect(text.includes(value), `${label} found in the log`).toBe(false);
      expect(text.includes(encodeURIComponent(value)), `${label} (URL-encoded) found in the log`).toBe(false);
      expect(text.includes(JSON.stringify(value).slice(1, -1)), `${label} (JSON-escaped) found in the log`).toBe(false);
    }
    console.log(`[logging ${testDialect}] ${secrets.size} secrets searched for in ${lines.length} log lines (${text.length} bytes)`);

    // one structured line per request
    const reqLines = lines.filter((l) => l.msg === "request");
    expect(reqLines.length).toBeGreaterThanOrEqual(requests);
    for (const l of reqLines) {
      expect(l).toMatchObject({ level: 30, method: expect.any(String), route: expect.any(String), status: expect.any(Number), durationMs: expect.any(Number) });
      expect(l.requestId).toMatch(/^[0-9a-f-]{36}$/);
      expect(typeof l.time).toBe("number");
    }
    const routes = new Set(reqLines.map((l) => l.route));
    // route patterns, never the paths: the reset token is a path segment
    expect(routes).toContain("/reset-password/:token");
    expect(routes).toContain("trpc");
    expect(new Set(reqLines.map((l) => l.requestId)).size).toBe(reqLines.length);
  });

  it("a 404's line carries the path, sanitised: no query, token-shaped segments as :token; /favicon.ico answers 204 unlogged as a 404", async () => {
    const token = "aB3dE5gH7jK9mN1pQ3sT5vX7";
    const res = await get(`${server.url}/some/where/${token}/reset-password-done/x?token=${token}&code=123456`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: "NOT_FOUND" });
    const line = log.lines().find((l) => l.msg === "request" && l.requestId === res.headers.get("x-request-id"));
    // 20+ characters mixing letters and digits are a token; a long word without digits, or a short id, stays
    expect(line).toMatchObject({ route: "unmatched", status: 404, path: "/some/where/:token/reset-password-done/x" });
    const short = await get(`${server.auth}/no-such-route/abc123/${"b1".repeat(10)}?x=1`);
    expect(short.status).toBe(404);
    const shortLine = log.lines().find((l) => l.msg === "request" && l.requestId === short.headers.get("x-request-id"));
    expect(shortLine?.path).toBe("/api/auth/no-such-route/abc123/:token");
    expect(log.text.includes(token)).toBe(false);
    expect(log.text.includes("123456")).toBe(false);
    // matched routes log their pattern only, never a path
    const ok = await get(`${server.auth}/ok`);
    const okLine = log.lines().find((l) => l.msg === "request" && l.requestId === ok.headers.get("x-request-id"));
    expect(okLine).toMatchObject({ route: "/ok" });
    expect(okLine).not.toHaveProperty("path");

    const icon = await get(`${server.url}/favicon.ico`);
    expect(icon.status).toBe(204);
    expect(icon.text).toBe("");
    const iconLine = log.lines().find((l) => l.msg === "request" && l.requestId === icon.headers.get("x-request-id"));
    expect(iconLine).toMatchObject({ route: "favicon", status: 204 });
  });

  it("a 5xx answer carries the request id that tags its error log line (with the cause, without the password)", async () => {
    const email = uniqueEmail("log-5xx");
    const password = "fifth-Secret-pw-4715";
    expect((await json("/sign-up/email", { name: "F", email, password })).status).toBe(200);
    await server.portcullis.app.orm.em.fork().getConnection().execute("drop table sessions");
    const res = await json("/sign-in/email", { email, password });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ code: "INTERNAL_SERVER_ERROR", message: "Unexpected failure", requestId: expect.any(String) });
    const lines = log.lines().filter((l) => l.requestId === res.body.requestId);
    expect(lines.map((l) => l.msg)).toEqual(["unexpected failure", "request"]);
    expect(lines[0]!.level).toBe(50);
    expect(lines[0]!.err).toBeDefined();
    expect(lines[1]).toMatchObject({ route: "/sign-in/email", status: 500 });
    expect(log.text.includes(password)).toBe(false);
  });
});
