import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signUp } from "../../harness/admin-helpers.ts";
import { SECOND } from "../../harness/clock.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * docs/configuration.md `emailOTP` and `magicLink`: the lengths, lifetimes and tries the options
 * set (the defaults are proven in email-otp.test.ts and magic-link.test.ts), and one live code per
 * address *and type*: a send of another type leaves the first code alone.
 */
let server: TestServer;
const mails: Array<{ kind: string; to: string; url?: string | undefined; code?: string | undefined; otpType?: string | undefined }> = [];

beforeAll(async () => {
  server = await startTestServer({
    email: { send: (m) => void mails.push({ kind: m.kind, to: m.to, url: m.url, code: m.code, otpType: m.otpType }) },
    emailOTP: { otpLength: 8, allowedAttempts: 5, expiresIn: 60 },
    magicLink: { expiresIn: 60 },
  });
});
afterAll(async () => {
  await server?.close();
});

async function mailedCode(email: string, type = "sign-in"): Promise<string> {
  const before = mails.length;
  expect((await post(`${server.auth}/email-otp/send-verification-otp`, { email, type })).status).toBe(200);
  await server.portcullis.app.mailer.settle();
  const mail = mails.slice(before).find((m) => m.to === email && m.kind === "emailOtp" && m.otpType === type);
  if (!mail?.code) throw new Error(`no ${type} code to ${email}`);
  return mail.code;
}

async function mailedLink(email: string): Promise<string> {
  const before = mails.length;
  expect((await post(`${server.auth}/sign-in/magic-link`, { email })).status).toBe(200);
  await server.portcullis.app.mailer.settle();
  const mail = mails.slice(before).find((m) => m.to === email && m.kind === "magicLink");
  if (!mail?.url) throw new Error(`no link to ${email}`);
  return `${server.auth}/magic-link/verify?token=${new URL(mail.url).searchParams.get("token")}`;
}

const signIn = (email: string, otp: string) => post(`${server.auth}/sign-in/email-otp`, { email, otp });
const wrong = (code: string, n: number) => String((Number(code) + n) % 10 ** code.length).padStart(code.length, "0");

describe("emailOTP options", () => {
  it("otpLength: 8 mails 8-digit codes", async () => {
    const code = await mailedCode(uniqueEmail("opt-len"));
    expect(code).toMatch(/^\d{8}$/);
  });

  it("allowedAttempts: 5 judges five tries; the sixth, even right, is 403 TOO_MANY_ATTEMPTS", async () => {
    const email = uniqueEmail("opt-tries");
    const code = await mailedCode(email);
    for (let i = 1; i <= 5; i++) expect((await signIn(email, wrong(code, i))).body.code).toBe("INVALID_OTP");
    const late = await signIn(email, code);
    expect(late.status).toBe(403);
    expect(late.body.code).toBe("TOO_MANY_ATTEMPTS");
  });

  it("expiresIn: 60 s: a code at 59 s signs in, one at 61 s is 400 OTP_EXPIRED", async () => {
    const first = uniqueEmail("opt-ttl-a");
    const second = uniqueEmail("opt-ttl-b");
    const [a, b] = [await mailedCode(first), await mailedCode(second)];
    server.clock.advance(59 * SECOND);
    expect((await signIn(first, a)).status).toBe(200);
    server.clock.advance(2 * SECOND);
    const late = await signIn(second, b);
    expect(late.status).toBe(400);
    expect(late.body.code).toBe("OTP_EXPIRED");
  });

  it("one live code per address and type: a forget-password code leaves the sign-in code alive, a new sign-in code replaces it", async () => {
    const user = await signUp(server, { email: uniqueEmail("opt-types") });
    const signInCode = await mailedCode(user.email, "sign-in");
    const resetCode = await mailedCode(user.email, "forget-password");
    const check = (type: string, otp: string) => post(`${server.auth}/email-otp/check-verification-otp`, { email: user.email, type, otp });
    expect((await check("sign-in", signInCode)).body).toEqual({ success: true });
    expect((await check("forget-password", resetCode)).body).toEqual({ success: true });
    // A code is right for its own type only.
    if (signInCode !== resetCode) expect((await check("forget-password", signInCode)).body.code).toBe("INVALID_OTP");
    const fresh = await mailedCode(user.email, "sign-in");
    if (fresh !== signInCode) expect((await check("sign-in", signInCode)).body.code).toBe("INVALID_OTP");
    expect((await check("sign-in", fresh)).body).toEqual({ success: true });
    expect((await check("forget-password", resetCode)).body).toEqual({ success: true });
  });
});

describe("magicLink options", () => {
  it("expiresIn: 60 s: a link at 59 s signs in, one at 61 s is 400 INVALID_TOKEN", async () => {
    const first = await mailedLink(uniqueEmail("opt-ml-a"));
    const second = await mailedLink(uniqueEmail("opt-ml-b"));
    server.clock.advance(59 * SECOND);
    expect((await get(first)).status).toBe(200);
    server.clock.advance(2 * SECOND);
    const late = await get(second);
    expect(late.status).toBe(400);
    expect(late.body.code).toBe("INVALID_TOKEN");
  });
});
