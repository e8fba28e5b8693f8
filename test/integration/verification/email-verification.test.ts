import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../../src/crypto/tokens.ts";
import { Verification } from "../../../src/db/entities/index.ts";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { cookieFrom, get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { captureLogger, linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

const PASSWORD = "password123";
const PUBLIC = "http://127.0.0.1:3000";

let sink: SmtpSink;
/** requireEmailVerification on, real SMTP. */
let strict: TestServer;
/** Defaults (no verification required), real SMTP. */
let relaxed: TestServer;

beforeAll(async () => {
  sink = await startSmtpSink();
  strict = await startTestServer({
    emailAndPassword: { requireEmailVerification: true },
    email: { smtpUrl: sink.url },
  });
  relaxed = await startTestServer({ email: { smtpUrl: sink.url } });
});
afterAll(async () => {
  await strict?.close();
  await relaxed?.close();
  await sink?.close();
});

async function verificationRows(server: TestServer) {
  return server.portcullis.app.orm.em.fork().find(Verification, {}, { orderBy: { createdAt: "asc" } });
}

async function mailFor(email: string, count = 1) {
  await sink.waitFor(() => sink.to(email).length >= count);
  return sink.to(email)[count - 1]!;
}

describe("email verification (requireEmailVerification on)", () => {
  it("sign-up mails a link; the unverified user gets 403; the link verifies; sign-in then works", async () => {
    const email = uniqueEmail("verify");
    const up = await post(`${strict.auth}/sign-up/email`, { name: "Vera", email, password: PASSWORD, callbackURL: "/welcome" });
    expect(up.status).toBe(200);
    expect(up.body.token).toBeNull();
    expect(cookieFrom(up.headers)).toBeNull();
    expect(up.headers.get("set-auth-token")).toBeNull();
    expect(up.body.user.emailVerified).toBe(false);

    const mail = await mailFor(email);
    expect(mail.subject).toBe("Verify your email address");
    expect(mail.from).toBe("no-reply@localhost");
    const link = linkFrom(mail, "/verify-email");
    const url = new URL(link);
    expect(`${url.origin}${url.pathname}`).toBe(`${PUBLIC}/api/auth/verify-email`);
    expect(url.searchParams.get("callbackURL")).toBe("/welcome");
    const token = url.searchParams.get("token")!;
    expect(Buffer.from(token, "base64url").length).toBeGreaterThanOrEqual(32);
    expect(mail.html).toContain(`href="${link.replaceAll("&", "&amp;")}"`);

    // Stored as SHA-256 only: the raw token is nowhere in the table.
    const user = up.body.user.id as string;
    const rows = (await verificationRows(strict)).filter((r) => r.value.includes(user));
    expect(rows).toHaveLength(1);
    expect(rows[0]!.identifier).toBe(sha256(token));
    expect(rows[0]!.purpose).toBe("email-verification");
    expect(JSON.stringify(rows)).not.toContain(token);

    const early = await post(`${strict.auth}/sign-in/email`, { email, password: PASSWORD });
    expect(early.status).toBe(403);
    expect(early.body.code).toBe("EMAIL_NOT_VERIFIED");
    expect(cookieFrom(early.headers)).toBeNull();

    const verified = await get(onServer(link, strict.url));
    expect(verified.status).toBe(302);
    expect(verified.headers.get("location")).toBe(`${PUBLIC}/welcome`);
    expect((await verificationRows(strict)).filter((r) => r.value.includes(user) && r.identifier === sha256(token))).toHaveLength(0);

    const signedIn = await post(`${strict.auth}/sign-in/email`, { email, password: PASSWORD });
    expect(signedIn.status).toBe(200);
    expect(typeof signedIn.body.token).toBe("string");
    expect(signedIn.body.user.emailVerified).toBe(true);
    const session = await get(`${strict.auth}/get-session`, { bearer: signedIn.body.token });
    expect(session.body.user.emailVerified).toBe(true);

    // Single use: the same link again fails, as a redirect or as 400.
    const again = await get(onServer(link, strict.url));
    expect(again.status).toBe(302);
    expect(again.headers.get("location")).toBe(`${PUBLIC}/welcome?error=INVALID_TOKEN`);
    const plain = await get(`${strict.auth}/verify-email?token=${token}`);
    expect(plain.status).toBe(400);
    expect(plain.body.code).toBe("INVALID_TOKEN");
    const garbage = await get(`${strict.auth}/verify-email?token=${"x".repeat(43)}`);
    expect(garbage.status).toBe(400);
    expect(garbage.body.code).toBe("INVALID_TOKEN");
  });

  it("an unverified sign-in re-sends the mail, at most once a minute, and only after the password check", async () => {
    const email = uniqueEmail("resend");
    const up = await post(`${strict.auth}/sign-up/email`, { name: "Rex", email, password: PASSWORD });
    expect(up.status).toBe(200);
    await mailFor(email, 1);

    // Within the minute of the sign-up mail: 403, no second mail.
    strict.clock.advance(30 * SECOND);
    expect((await post(`${strict.auth}/sign-in/email`, { email, password: PASSWORD })).status).toBe(403);
    await strict.portcullis.app.mailer.settle();
    expect(sink.to(email)).toHaveLength(1);

    // A wrong password says nothing about verification and sends nothing.
    strict.clock.advance(61 * SECOND);
    const wrong = await post(`${strict.auth}/sign-in/email`, { email, password: "wrong-password" });
    expect(wrong.status).toBe(401);
    await strict.portcullis.app.mailer.settle();
    expect(sink.to(email)).toHaveLength(1);

    const resent = await post(`${strict.auth}/sign-in/email`, { email, password: PASSWORD, callbackURL: "/after" });
    expect(resent.status).toBe(403);
    expect(resent.body.code).toBe("EMAIL_NOT_VERIFIED");
    const second = await mailFor(email, 2);
    const link = linkFrom(second, "/verify-email");
    expect(new URL(link).searchParams.get("callbackURL")).toBe("/after");
    expect(new URL(link).searchParams.get("token")).not.toBe(new URL(linkFrom(sink.to(email)[0]!)).searchParams.get("token"));

    // Right after the re-send: throttled again.
    expect((await post(`${strict.auth}/sign-in/email`, { email, password: PASSWORD })).status).toBe(403);
    await strict.portcullis.app.mailer.settle();
    expect(sink.to(email)).toHaveLength(2);

    const verified = await get(onServer(link, strict.url));
    expect(verified.status).toBe(302);
    expect(verified.headers.get("location")).toBe(`${PUBLIC}/after`);
    expect((await post(`${strict.auth}/sign-in/email`, { email, password: PASSWORD })).status).toBe(200);
  });

  it("links expire after one hour (injected clock)", async () => {
    const early = uniqueEmail("ttl-a");
    const late = uniqueEmail("ttl-b");
    for (const email of [early, late]) {
      expect((await post(`${strict.auth}/sign-up/email`, { name: "T", email, password: PASSWORD })).status).toBe(200);
    }
    const earlyLink = linkFrom(await mailFor(early), "/verify-email");
    const lateLink = linkFrom(await mailFor(late), "/verify-email");

    strict.clock.advance(59 * MINUTE);
    const ok = await get(onServer(earlyLink, strict.url));
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ status: true, user: null }); // better-auth's answer for a verified address

    strict.clock.advance(2 * MINUTE);
    const expired = await get(onServer(lateLink, strict.url));
    expect(expired.status).toBe(400);
    expect(expired.body.code).toBe("INVALID_TOKEN");
    expect((await post(`${strict.auth}/sign-in/email`, { email: late, password: PASSWORD })).status).toBe(403);
    // The expired row was cleared on the failed use.
    const token = new URL(lateLink).searchParams.get("token")!;
    expect((await verificationRows(strict)).some((r) => r.identifier === sha256(token))).toBe(false);
  });

  it("send-verification-email answers the same for unknown, verified and unverified addresses", async () => {
    const unverified = uniqueEmail("pending");
    const verified = uniqueEmail("done");
    const unknown = uniqueEmail("nobody");
    for (const email of [unverified, verified]) {
      expect((await post(`${strict.auth}/sign-up/email`, { name: "S", email, password: PASSWORD })).status).toBe(200);
    }
    expect((await get(onServer(linkFrom(await mailFor(verified)), strict.url))).status).toBe(200);
    await mailFor(unverified);
    strict.clock.advance(61 * SECOND); // past the resend throttle of the sign-up mails

    const replies = [];
    for (const email of [unverified, verified, unknown]) {
      replies.push(await post(`${strict.auth}/send-verification-email`, { email, callbackURL: "/verified" }));
    }
    for (const reply of replies) {
      expect(reply.status).toBe(200);
      expect(reply.text).toBe(replies[0]!.text);
      expect(reply.body).toEqual({ status: true });
    }
    const fresh = await mailFor(unverified, 2);
    expect(new URL(linkFrom(fresh)).searchParams.get("callbackURL")).toBe("/verified");
    await strict.portcullis.app.mailer.settle();
    expect(sink.to(verified)).toHaveLength(1);
    expect(sink.to(unknown)).toHaveLength(0);

    const evil = await post(`${strict.auth}/send-verification-email`, { email: unverified, callbackURL: "https://evil.example/x" });
    expect(evil.status).toBe(403);
    expect(evil.body.code).toBe("INVALID_CALLBACK_URL");
    const malformed = await post(`${strict.auth}/send-verification-email`, { email: "not-an-email" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("VALIDATION_ERROR"); // better-auth's body-schema answer
    expect(malformed.body.issues).toEqual([{ path: "email", message: "Invalid email address" }]);
  });

  it("a verify link with an untrusted callbackURL is refused before the token is used", async () => {
    const email = uniqueEmail("cb");
    expect((await post(`${strict.auth}/sign-up/email`, { name: "C", email, password: PASSWORD })).status).toBe(200);
    const link = new URL(onServer(linkFrom(await mailFor(email)), strict.url));
    link.searchParams.set("callbackURL", "https://evil.example/steal");
    const refused = await get(link.toString());
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("INVALID_CALLBACK_URL");
    link.searchParams.delete("callbackURL");
    expect((await get(link.toString())).status).toBe(200);
  });
});

describe("email verification (not required)", () => {
  it("sign-up sends nothing; an explicit request verifies a signed-in user, seen at once by get-session", async () => {
    const email = uniqueEmail("relaxed");
    const up = await post(`${relaxed.auth}/sign-up/email`, { name: "R", email, password: PASSWORD });
    expect(up.status).toBe(200);
    const token = up.body.token as string;
    expect((await get(`${relaxed.auth}/get-session`, { bearer: token })).body.user.emailVerified).toBe(false);
    await relaxed.portcullis.app.mailer.settle();
    expect(sink.to(email)).toHaveLength(0);

    expect((await post(`${relaxed.auth}/send-verification-email`, { email }, { bearer: token })).body).toEqual({ status: true });
    const link = linkFrom(await mailFor(email), "/verify-email");
    expect(new URL(link).searchParams.has("callbackURL")).toBe(false);
    const verified = await get(onServer(link, relaxed.url));
    expect(verified.status).toBe(200);
    expect(verified.body).toEqual({ status: true, user: null });
    expect((await get(`${relaxed.auth}/get-session`, { bearer: token })).body.user.emailVerified).toBe(true);
  });
});

describe("mail delivery edges", () => {
  it("without SMTP configured, the link is written to the log and works", async () => {
    const { logger, lines } = captureLogger();
    const server = await startTestServer({ emailAndPassword: { requireEmailVerification: true } }, { logger });
    try {
      expect(server.portcullis.app.mailer.delivers).toBe(false);
      const email = uniqueEmail("logged");
      expect((await post(`${server.auth}/sign-up/email`, { name: "L", email, password: PASSWORD, callbackURL: "/home" })).status).toBe(200);
      await server.portcullis.app.mailer.settle();
      const line = lines.find((l) => l.mail?.to === email);
      expect(line).toBeDefined();
      expect(line!.level).toBe(30);
      expect(line!.mail.subject).toBe("Verify your email address");
      expect(line!.requestId).toBe(lines.find((l) => l.msg === "request" && l.route === "/sign-up/email")!.requestId);
      const link = line!.mail.link as string;
      expect(link.startsWith(`${PUBLIC}/api/auth/verify-email?token=`)).toBe(true);
      const verified = await get(onServer(link, server.url));
      expect(verified.status).toBe(302);
      expect(verified.headers.get("location")).toBe(`${PUBLIC}/home`);
      expect((await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD })).status).toBe(200);
    } finally {
      await server.close();
    }
  });

  it("a refused send is logged with the request id and leaves no live token behind", async () => {
    const { logger, lines } = captureLogger();
    const failing = await startSmtpSink();
    failing.rejectAll(true);
    const server = await startTestServer(
      { emailAndPassword: { requireEmailVerification: true }, email: { smtpUrl: failing.url } },
      { logger },
    );
    try {
      const email = uniqueEmail("bounce");
      const up = await post(`${server.auth}/sign-up/email`, { name: "B", email, password: PASSWORD });
      expect(up.status).toBe(200);
      expect(up.body.token).toBeNull();
      await server.portcullis.app.mailer.settle();
      const request = lines.find((l) => l.msg === "request" && l.route === "/sign-up/email");
      const failure = lines.find((l) => l.msg === "email not sent");
      expect(failure).toBeDefined();
      expect(failure!.level).toBe(50);
      expect(failure!.requestId).toBe(request!.requestId);
      expect(await verificationRows(server)).toHaveLength(0);

      // Nothing half-done: the next request is not throttled by the undelivered one.
      failing.rejectAll(false);
      expect((await post(`${server.auth}/send-verification-email`, { email })).status).toBe(200);
      const mail = await failing.waitFor((m) => m.to.includes(email));
      expect((await get(onServer(linkFrom(mail), server.url))).status).toBe(200);
      expect((await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD })).status).toBe(200);
    } finally {
      await server.close();
      await failing.close();
    }
  });
});
