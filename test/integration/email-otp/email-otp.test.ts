import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Account, AuditEvent, EmailOtp, User } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, PASSWORD, signUp } from "../../harness/admin-helpers.ts";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { cookieFrom, get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, startSmtpSink, type ReceivedMail, type SmtpSink } from "../../harness/smtp.ts";

/**
 * Email one-time codes (docs/passwordless.md) over real HTTP and real SMTP: better-auth's
 * /email-otp/* routes, /sign-in/email-otp and /forget-password/email-otp.
 */
let sink: SmtpSink;
let server: TestServer;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url } });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

type OtpType = "sign-in" | "email-verification" | "forget-password";

const codeOf = (mail: ReceivedMail) => /^\s*(\d{6})\s*$/m.exec(mail.text)![1]!;

/** Asks for a code and returns it from the mail. */
async function mailedCode(s: TestServer, email: string, type: OtpType = "sign-in"): Promise<string> {
  const before = sink.to(email).length;
  const res = await post(`${s.auth}/email-otp/send-verification-otp`, { email, type });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ success: true });
  await sink.waitFor(() => sink.to(email).length > before);
  return codeOf(sink.to(email)[before]!);
}

/** A six-digit code that is not `code`. */
const wrong = (code: string, n = 1) => String((Number(code) + n) % 1_000_000).padStart(6, "0");

const signIn = (s: TestServer, email: string, otp: string, extra: Record<string, unknown> = {}) => post(`${s.auth}/sign-in/email-otp`, { email, otp, ...extra });

function expectCode(res: Reply, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.code).toBe(code);
}

describe("email OTP: sign-in", () => {
  it("a mailed 6-digit code signs in once, creating the account; neither code nor address is stored in clear", async () => {
    const email = uniqueEmail("otp-new");
    const code = await mailedCode(server, email);
    const mail = sink.to(email)[0]!;
    expect(mail.subject).toBe(`Your sign-in code: ${code}`);
    expect(mail.text).not.toMatch(/https?:\/\//);
    const rows = await server.portcullis.app.orm.em.fork().find(EmailOtp, {});
    expect(JSON.stringify(rows)).not.toContain(code);
    expect(JSON.stringify(rows)).not.toContain(email);

    const res = await signIn(server, email, code, { name: "Otto" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ token: expect.any(String), user: expect.objectContaining({ email, name: "Otto", emailVerified: true }) });
    expect(res.headers.get("set-auth-token")).toBe(res.body.token);
    expect(cookieFrom(res.headers)).toContain(res.body.token);
    expectCode(await signIn(server, email, code), 400, "INVALID_OTP");
    const audit = await server.portcullis.app.orm.em.fork().find(AuditEvent, { action: "email-otp-sign-in", targetId: res.body.user.id });
    expect(audit).toHaveLength(1);
  });

  it("a code guessed three times is dead: the fourth try, right or not, is 403 TOO_MANY_ATTEMPTS", async () => {
    const email = uniqueEmail("otp-guess");
    const code = await mailedCode(server, email);
    for (let i = 1; i <= 3; i++) expectCode(await signIn(server, email, wrong(code, i)), 400, "INVALID_OTP");
    expectCode(await signIn(server, email, code), 403, "TOO_MANY_ATTEMPTS");
    expectCode(await signIn(server, email, wrong(code, 9)), 403, "TOO_MANY_ATTEMPTS");
  });

  it("the third try may be the right one", async () => {
    const email = uniqueEmail("otp-third");
    const code = await mailedCode(server, email);
    for (let i = 1; i <= 2; i++) expectCode(await signIn(server, email, wrong(code, i)), 400, "INVALID_OTP");
    expect((await signIn(server, email, code)).status).toBe(200);
  });

  it("concurrent wrong guesses cannot share a try: of ten at once, three are judged and seven refused", async () => {
    const email = uniqueEmail("otp-burst");
    const code = await mailedCode(server, email);
    const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => signIn(server, email, wrong(code, i + 1))));
    const codes = replies.map((r) => r.body.code).sort();
    expect(codes).toEqual([...Array(3).fill("INVALID_OTP"), ...Array(7).fill("TOO_MANY_ATTEMPTS")]);
    expectCode(await signIn(server, email, code), 403, "TOO_MANY_ATTEMPTS");
  });

  it("two concurrent right codes: one session", async () => {
    const email = uniqueEmail("otp-race");
    const user = await signUp(server, { email });
    const code = await mailedCode(server, email);
    const replies = await Promise.all([signIn(server, email, code), signIn(server, email, code)]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(replies.find((r) => r.status === 400)!.body.code).toBe("INVALID_OTP");
    // The takeover of the unverified sign-up ended its session: only the code's remains.
    const sessions = await get(`${server.auth}/list-sessions`, { bearer: replies.find((r) => r.status === 200)!.body.token });
    expect(sessions.body).toHaveLength(1);
    expect(user.token).not.toBe(replies.find((r) => r.status === 200)!.body.token);
  });

  it("a new send replaces the code (the old one is dead) with a fresh budget", async () => {
    const email = uniqueEmail("otp-resend");
    const first = await mailedCode(server, email);
    for (let i = 1; i <= 3; i++) expectCode(await signIn(server, email, wrong(first, i)), 400, "INVALID_OTP");
    const second = await mailedCode(server, email);
    if (second !== first) expectCode(await signIn(server, email, first), 400, "INVALID_OTP");
    expect((await signIn(server, email, second)).status).toBe(200);
  });

  it("an expired code (5 minutes) is 400 OTP_EXPIRED", async () => {
    const email = uniqueEmail("otp-late");
    const code = await mailedCode(server, email);
    server.clock.advance(5 * MINUTE + SECOND);
    expectCode(await signIn(server, email, code), 400, "OTP_EXPIRED");
    const swept = await server.portcullis.sweeper.sweepOnce();
    expect(swept.emailOtps).toBeGreaterThanOrEqual(1);
    expectCode(await signIn(server, email, code), 400, "INVALID_OTP");
  });

  it("an unverified account is taken over; a banned user gets 403 BANNED_USER", async () => {
    const squatter = await signUp(server, { email: uniqueEmail("otp-squat") });
    const res = await signIn(server, squatter.email, await mailedCode(server, squatter.email));
    expect(res.status).toBe(200);
    expect(res.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
    expect((await get(`${server.auth}/get-session`, { bearer: squatter.token })).body).toBeNull();
    expect(await server.portcullis.app.orm.em.fork().count(Account, { user: squatter.id })).toBe(0);

    const admin = await bootstrapAdmin(server);
    expect((await adminPost(server, "ban-user", { userId: squatter.id }, admin.token)).status).toBe(200);
    expectCode(await signIn(server, squatter.email, await mailedCode(server, squatter.email)), 403, "BANNED_USER");
  });

  it("two-factor still applies after a code sign-in", async () => {
    const user = await signUp(server, { email: uniqueEmail("otp-2fa") });
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: user.id }, { emailVerified: true, twoFactorEnabled: true });
    const res = await signIn(server, user.email, await mailedCode(server, user.email));
    expect(res.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
    expect(cookieFrom(res.headers, "portcullis.two_factor")).not.toBeNull();
  });

  it("an impersonation session can neither ask for a code nor use one", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server, { email: uniqueEmail("otp-imp") });
    const imp = (await adminPost(server, "impersonate-user", { userId: target.id }, admin.token)).headers.get("set-auth-token")!;
    expectCode(await post(`${server.auth}/email-otp/send-verification-otp`, { email: target.email, type: "sign-in" }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    const code = await mailedCode(server, target.email);
    expectCode(await post(`${server.auth}/sign-in/email-otp`, { email: target.email, otp: code }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectCode(await post(`${server.auth}/email-otp/reset-password`, { email: target.email, otp: code, password: "x".repeat(12) }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expect((await signIn(server, target.email, code)).status).toBe(200);
  });

  it("disableSignUp: no code for an address without an account, and its sign-in is INVALID_OTP", async () => {
    const closed = await startTestServer({ email: { smtpUrl: sink.url }, emailOTP: { disableSignUp: true } });
    try {
      const stranger = uniqueEmail("otp-stranger");
      expect((await post(`${closed.auth}/email-otp/send-verification-otp`, { email: stranger, type: "sign-in" })).body).toEqual({ success: true });
      await closed.portcullis.app.mailer.settle();
      expect(sink.to(stranger)).toHaveLength(0);
      expectCode(await signIn(closed, stranger, "123456"), 400, "INVALID_OTP");
    } finally {
      await closed.close();
    }
  });

  it("bad input is a 4xx, never a 5xx", async () => {
    const bodies: Array<[string, unknown]> = [
      ["/email-otp/send-verification-otp", { email: "nope", type: "sign-in" }],
      ["/email-otp/send-verification-otp", { email: "a@b.example", type: "change-email" }],
      ["/email-otp/send-verification-otp", { email: "a@b.example" }],
      ["/sign-in/email-otp", { email: "a@b.example", otp: "%%%" }],
      ["/sign-in/email-otp", { email: "a@b.example", otp: "1".repeat(100) }],
      ["/sign-in/email-otp", { email: ["a@b.example"], otp: "123456" }],
      ["/email-otp/check-verification-otp", { email: "a@b.example", type: "sign-in" }],
      ["/email-otp/verify-email", { email: "", otp: "123456" }],
      ["/email-otp/reset-password", { email: "a@b.example", otp: "123456", password: "short" }],
      ["/forget-password/email-otp", { email: null }],
    ];
    for (const [path, body] of bodies) {
      const res = await post(`${server.auth}${path}`, body);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBeGreaterThanOrEqual(400);
      expect(res.status, `${path} ${JSON.stringify(body)}`).toBeLessThan(500);
    }
  });
});

describe("email OTP: verification and password reset", () => {
  it("verify-email: the code marks the address verified; check-verification-otp checks without using it up", async () => {
    const user = await signUp(server, { email: uniqueEmail("otp-verify") });
    const code = await mailedCode(server, user.email, "email-verification");
    const check = await post(`${server.auth}/email-otp/check-verification-otp`, { email: user.email, type: "email-verification", otp: code });
    expect(check.status, check.text).toBe(200);
    expect(check.body).toEqual({ success: true });
    const res = await post(`${server.auth}/email-otp/verify-email`, { email: user.email, otp: code });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: true, token: null, user: expect.objectContaining({ id: user.id, emailVerified: true }) });
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body.user.emailVerified).toBe(true);
    expectCode(await post(`${server.auth}/email-otp/verify-email`, { email: user.email, otp: code }), 400, "INVALID_OTP");
  });

  it("check-verification-otp: a sign-in code for an address without an account is right (sign-up comes next)", async () => {
    const email = uniqueEmail("otp-check-new");
    const code = await mailedCode(server, email);
    expect((await post(`${server.auth}/email-otp/check-verification-otp`, { email, type: "sign-in", otp: code })).body).toEqual({ success: true });
    expect((await signIn(server, email, code)).status).toBe(200);
  });

  it("reset-password: the code sets the password, ends every session, verifies the address; an unknown address gets no mail", async () => {
    const user = await signUp(server, { email: uniqueEmail("otp-reset") });
    const before = sink.to(user.email).length;
    expect((await post(`${server.auth}/forget-password/email-otp`, { email: user.email })).body).toEqual({ success: true });
    await sink.waitFor(() => sink.to(user.email).length > before);
    const mail = sink.to(user.email)[before]!;
    expect(mail.subject).toMatch(/^Your password reset code: \d{6}$/);
    const code = codeOf(mail);

    expectCode(await post(`${server.auth}/email-otp/reset-password`, { email: user.email, otp: code, password: "short" }), 400, "PASSWORD_TOO_SHORT");
    const res = await post(`${server.auth}/email-otp/reset-password`, { email: user.email, otp: code, password: "brand-new-password" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body).toBeNull();
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD })).status).toBe(401);
    const again = await post(`${server.auth}/sign-in/email`, { email: user.email, password: "brand-new-password" });
    expect(again.status).toBe(200);
    expect(again.body.user.emailVerified).toBe(true);
    expect(await server.portcullis.app.orm.em.fork().count(AuditEvent, { action: "email-otp-reset-password", targetId: user.id })).toBe(1);

    const stranger = uniqueEmail("otp-nobody");
    expect((await post(`${server.auth}/email-otp/request-password-reset`, { email: stranger })).body).toEqual({ success: true });
    await server.portcullis.app.mailer.settle();
    expect(sink.to(stranger)).toHaveLength(0);
    // A guess at an address without an account answers exactly like one at an account.
    expectCode(await post(`${server.auth}/email-otp/reset-password`, { email: stranger, otp: "123456", password: "brand-new-password" }), 400, "INVALID_OTP");
  });

  it("reset-password of an unverified account cleans up what a squatter left (the takeover rule): linked accounts go, the new password stays; a verified account keeps its links", async () => {
    const em = () => server.portcullis.app.orm.em.fork();
    const linkGithub = async (userId: string) => {
      const now = new Date();
      await em().insert(Account, { id: crypto.randomUUID(), user: userId, providerId: "github", accountId: `gh-${userId}`, createdAt: now, updatedAt: now });
    };
    const resetByCode = async (email: string) => {
      const before = sink.to(email).length;
      expect((await post(`${server.auth}/forget-password/email-otp`, { email })).status).toBe(200);
      await sink.waitFor(() => sink.to(email).length > before);
      const res = await post(`${server.auth}/email-otp/reset-password`, { email, otp: codeOf(sink.to(email)[before]!), password: "brand-new-password" });
      expect(res.status, res.text).toBe(200);
    };
    const providers = async (userId: string) => (await em().find(Account, { user: userId })).map((a) => a.providerId).sort();
    const auditOf = async (userId: string) => JSON.parse((await em().findOneOrFail(AuditEvent, { action: "email-otp-reset-password", targetId: userId })).metadata!);

    const squatter = await signUp(server, { email: uniqueEmail("otp-reset-squat") });
    await linkGithub(squatter.id);
    await resetByCode(squatter.email);
    expect(await providers(squatter.id)).toEqual(["credential"]);
    expect(await auditOf(squatter.id)).toEqual({ unprovenAccessRemoved: true });
    expect((await em().findOneOrFail(User, { id: squatter.id })).emailVerified).toBe(true);
    expect((await post(`${server.auth}/sign-in/email`, { email: squatter.email, password: "brand-new-password" })).status).toBe(200);

    const owner = await signUp(server, { email: uniqueEmail("otp-reset-owner") });
    await em().nativeUpdate(User, { id: owner.id }, { emailVerified: true });
    await linkGithub(owner.id);
    await resetByCode(owner.email);
    expect(await providers(owner.id)).toEqual(["credential", "github"]);
    expect(await auditOf(owner.id)).toEqual({ unprovenAccessRemoved: false });
  });

  it("answers to guesses say nothing about an account: known and unknown addresses alike, after a request", async () => {
    const known = (await signUp(server, { email: uniqueEmail("otp-known") })).email;
    const unknown = uniqueEmail("otp-unknown");
    const seen: Record<string, string[]> = {};
    for (const email of [known, unknown]) {
      expect((await post(`${server.auth}/forget-password/email-otp`, { email })).status).toBe(200);
      await server.portcullis.app.mailer.settle();
      const codes: string[] = [];
      for (let i = 0; i < 4; i++) codes.push((await post(`${server.auth}/email-otp/reset-password`, { email, otp: "000000", password: "brand-new-password" })).body.code);
      seen[email] = codes;
    }
    expect(seen[unknown]).toEqual(seen[known]);
    expect(seen[known]).toEqual(["INVALID_OTP", "INVALID_OTP", "INVALID_OTP", "TOO_MANY_ATTEMPTS"]);
  });
});

describe("email OTP: overrideDefaultEmailVerification", () => {
  it("sign-up and send-verification-email mail a code instead of a link; verify-email takes it", async () => {
    const s = await startTestServer({ email: { smtpUrl: sink.url }, emailOTP: { overrideDefaultEmailVerification: true }, emailVerification: { sendOnSignUp: true } });
    try {
      const email = uniqueEmail("otp-override");
      const up = await post(`${s.auth}/sign-up/email`, { name: "Ver", email, password: PASSWORD });
      expect(up.status).toBe(200);
      await sink.waitFor(() => sink.to(email).length > 0);
      const mail = sink.to(email)[0]!;
      expect(mail.subject).toMatch(/^Your verification code: \d{6}$/);
      expect(() => linkFrom(mail)).toThrow();
      // At most one a minute, like the link; then send-verification-email mails a fresh code.
      s.clock.advance(61 * SECOND);
      expect((await post(`${s.auth}/send-verification-email`, { email })).status).toBe(200);
      await sink.waitFor(() => sink.to(email).length > 1);
      const first = codeOf(mail);
      const second = codeOf(sink.to(email)[1]!);
      if (first !== second) expectCode(await post(`${s.auth}/email-otp/verify-email`, { email, otp: first }), 400, "INVALID_OTP");
      const res = await post(`${s.auth}/email-otp/verify-email`, { email, otp: second });
      expect(res.status, res.text).toBe(200);
      expect(res.body.user.emailVerified).toBe(true);
    } finally {
      await s.close();
    }
  });
});
