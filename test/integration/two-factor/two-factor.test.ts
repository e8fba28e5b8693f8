import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { cookieFrom, get, post, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * Two-factor (docs/wire-contract.md §10, better-auth's two-factor plugin shapes): enrollment is
 * active only after a first code; a password sign-in then ends in a pending sign-in (cookie, 5
 * minutes, single-use, 5 tries) completed by TOTP, a mailed code or a backup code.
 */

const PENDING = "portcullis.two_factor";
const TRUST = "portcullis.trust_device";

let sink: SmtpSink;
let server: TestServer;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, twoFactor: { issuer: "Acme" } });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const tf = (path: string, body: unknown, opts: { bearer?: string; cookie?: string } = {}) => post(`${server.auth}/two-factor/${path}`, body, opts);
const secretOf = (totpURI: string) => new URL(totpURI).searchParams.get("secret")!;
const code = (secret: string, offsetMs = 0) => totpCode(secret, server.clock.now().getTime() + offsetMs);
/** A code of a step not used yet: the clock moves one step (TOTP codes are single-use, RFC 6238 §5.2). */
function freshCode(secret: string): string {
  server.clock.advance(30 * SECOND);
  return code(secret);
}

interface Enrolled extends SignedInUser {
  secret: string;
  backupCodes: string[];
}

async function enrolled(): Promise<Enrolled> {
  const user = await signUp(server);
  const enabled = await tf("enable", { password: PASSWORD }, { bearer: user.token });
  expect(enabled.status, enabled.text).toBe(200);
  const secret = secretOf(enabled.body.totpURI);
  const verified = await tf("verify-totp", { code: freshCode(secret) }, { bearer: user.token });
  expect(verified.status, verified.text).toBe(200);
  return { ...user, secret, backupCodes: enabled.body.backupCodes };
}

/** Password sign-in of a 2FA user: the pending cookie (`name=value`). */
async function pendingSignIn(email: string, extraCookie?: string): Promise<{ reply: Reply; pending: string }> {
  const reply = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD }, extraCookie ? { cookie: extraCookie } : {});
  expect(reply.status, reply.text).toBe(200);
  return { reply, pending: cookieFrom(reply.headers, PENDING)! };
}

async function sessionsOf(userId: string): Promise<number> {
  const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select count(*) as n from sessions where user_id = ?", [userId]);
  return Number(rows[0].n);
}

describe("enrollment", () => {
  it("enable gives a TOTP URI (issuer, account) and 10 backup codes; active only after the first code", async () => {
    const user = await signUp(server);
    const enabled = await tf("enable", { password: PASSWORD }, { bearer: user.token });
    expect(enabled.status, enabled.text).toBe(200);
    expect(Object.keys(enabled.body).sort()).toEqual(["backupCodes", "totpURI"]);
    const uri = new URL(enabled.body.totpURI);
    expect(uri.protocol).toBe("otpauth:");
    expect(decodeURIComponent(uri.pathname)).toBe(`/Acme:${user.email}`);
    expect(uri.searchParams.get("issuer")).toBe("Acme");
    expect(enabled.body.backupCodes).toHaveLength(10);
    for (const c of enabled.body.backupCodes) expect(c).toMatch(/^[A-Za-z0-9]{5}-[A-Za-z0-9]{5}$/);

    // Not active yet: sign-in still gives a session, and the user record says false.
    const before = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD });
    expect(before.body.token).toEqual(expect.any(String));
    expect(before.body.user.twoFactorEnabled).toBe(false);

    expectError(await tf("verify-totp", { code: "000000" }, { bearer: user.token }), 401, "INVALID_CODE");
    const verified = await tf("verify-totp", { code: freshCode(secretOf(enabled.body.totpURI)) }, { bearer: user.token });
    expect(verified.status, verified.text).toBe(200);
    expect(verified.body).toMatchObject({ token: user.token, user: { id: user.id, twoFactorEnabled: true } });
    const session = await get(`${server.auth}/get-session`, { bearer: user.token });
    expect(session.body.user.twoFactorEnabled).toBe(true);
  });

  it("a mailed code also turns an enrollment on (better-auth); without enable first it turns nothing on", async () => {
    const user = await signUp(server);
    expect((await tf("send-otp", {}, { bearer: user.token })).status).toBe(200);
    const first = await sink.waitFor((m) => m.to.includes(user.email) && m.subject.startsWith("Your verification code"));
    const plain = await tf("verify-otp", { code: /\b(\d{6})\b/.exec(first.text)![1] }, { bearer: user.token });
    expect(plain.body.user.twoFactorEnabled).toBe(false);

    await tf("enable", { password: PASSWORD }, { bearer: user.token });
    await tf("send-otp", {}, { bearer: user.token });
    const second = await sink.waitFor((m) => m.to.includes(user.email) && m !== first && m.subject.startsWith("Your verification code"));
    const on = await tf("verify-otp", { code: /\b(\d{6})\b/.exec(second.text)![1] }, { bearer: user.token });
    expect(on.status, on.text).toBe(200);
    expect(on.body.user.twoFactorEnabled).toBe(true);
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD })).body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
  });

  it("needs the password: enable, get-totp-uri, generate-backup-codes and disable answer 400 INVALID_PASSWORD", async () => {
    const user = await enrolled();
    for (const path of ["enable", "get-totp-uri", "generate-backup-codes", "disable"]) {
      expectError(await tf(path, { password: "wrong password" }, { bearer: user.token }), 400, "INVALID_PASSWORD");
    }
    const uri = await tf("get-totp-uri", { password: PASSWORD }, { bearer: user.token });
    expect(secretOf(uri.body.totpURI)).toBe(user.secret);
    expectError(await tf("enable", { password: PASSWORD }), 401, "UNAUTHORIZED");
  });

  it("stores the TOTP secret sealed and the backup codes hashed, never in clear", async () => {
    const user = await enrolled();
    const conn = server.portcullis.app.orm.em.fork().getConnection();
    const [row] = await conn.execute("select secret from two_factors where user_id = ?", [user.id]);
    expect(row.secret).toMatch(/^k[A-Za-z0-9_-]{11}\./);
    expect(row.secret).not.toContain(user.secret);
    const stored = (await conn.execute("select code_hash from two_factor_backup_codes where user_id = ?", [user.id])).map((r: any) => r.code_hash);
    expect(stored).toHaveLength(10);
    for (const c of user.backupCodes) expect(stored.join()).not.toContain(c);
  });
});

describe("sign-in with two-factor on", () => {
  it("answers twoFactorRedirect with an httpOnly 5-minute pending cookie and no session; verify-totp completes it once", async () => {
    const user = await enrolled();
    const sessions = await sessionsOf(user.id);
    const { reply, pending } = await pendingSignIn(user.email);
    expect(reply.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp", "otp"] });
    expect(reply.headers.get("set-auth-token")).toBeNull();
    const line = reply.headers.getSetCookie().find((c) => c.startsWith(`${PENDING}=`))!;
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/Max-Age=300/);
    expect(line).toMatch(/SameSite=Lax/i);
    expect(await sessionsOf(user.id)).toBe(sessions);

    expectError(await tf("verify-totp", { code: code(user.secret) }), 401, "INVALID_TWO_FACTOR_COOKIE");
    const done = await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: pending });
    expect(done.status, done.text).toBe(200);
    expect(done.body.user).toMatchObject({ id: user.id, twoFactorEnabled: true });
    expect(done.headers.get("set-auth-token")).toBe(done.body.token);
    expect(cookieFrom(done.headers)).toBe(`portcullis.session_token=${done.body.token}`);
    expect((await get(`${server.auth}/get-session`, { bearer: done.body.token })).body.user.id).toBe(user.id);
    // Single-use: the same pending cookie again, even with a new code.
    expectError(await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: pending }), 401, "INVALID_TWO_FACTOR_COOKIE");
  });

  it("applies to username sign-in too", async () => {
    const user = await signUp(server, { username: `tf_${Date.now().toString(36)}` });
    const enabled = await tf("enable", { password: PASSWORD }, { bearer: user.token });
    await tf("verify-totp", { code: freshCode(secretOf(enabled.body.totpURI)) }, { bearer: user.token });
    const reply = await post(`${server.auth}/sign-in/username`, { username: user.user.username, password: PASSWORD });
    expect(reply.body).toMatchObject({ twoFactorRedirect: true });
    expect(cookieFrom(reply.headers, PENDING)).not.toBeNull();
  });

  it("refuses a replayed code: accepted once per time step", async () => {
    const user = await enrolled();
    const first = await pendingSignIn(user.email);
    const c = freshCode(user.secret);
    expect((await tf("verify-totp", { code: c }, { cookie: first.pending })).status).toBe(200);
    const second = await pendingSignIn(user.email);
    expectError(await tf("verify-totp", { code: c }, { cookie: second.pending }), 401, "INVALID_CODE");
    expect((await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: second.pending })).status).toBe(200);
  });

  it("locks the pending sign-in after 5 wrong codes; it expires after 5 minutes", async () => {
    const user = await enrolled();
    const { pending } = await pendingSignIn(user.email);
    for (let i = 0; i < 5; i++) expectError(await tf("verify-totp", { code: "000000" }, { cookie: pending }), 401, "INVALID_CODE");
    expectError(await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: pending }), 400, "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE");
    expectError(await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: pending }), 401, "INVALID_TWO_FACTOR_COOKIE");

    const late = await pendingSignIn(user.email);
    server.clock.advance(5 * MINUTE + SECOND);
    expectError(await tf("verify-totp", { code: code(user.secret) }, { cookie: late.pending }), 401, "INVALID_TWO_FACTOR_COOKIE");
  });

  it("locks the account's second step for 15 minutes after 10 failures in a row across sign-ins", async () => {
    const user = await enrolled();
    for (let i = 0; i < 10; i++) {
      const { pending } = await pendingSignIn(user.email);
      expectError(await tf("verify-totp", { code: "000000" }, { cookie: pending }), 401, "INVALID_CODE");
    }
    const { pending } = await pendingSignIn(user.email);
    expectError(await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: pending }), 429, "ACCOUNT_TEMPORARILY_LOCKED");
    server.clock.advance(15 * MINUTE);
    const after = await pendingSignIn(user.email);
    expect((await tf("verify-totp", { code: freshCode(user.secret) }, { cookie: after.pending })).status).toBe(200);
  });

  it("backup codes: each works once; generating new ones retires the old", async () => {
    const user = await enrolled();
    const first = await pendingSignIn(user.email);
    const used = await tf("verify-backup-code", { code: user.backupCodes[0] }, { cookie: first.pending });
    expect(used.status, used.text).toBe(200);
    expect(used.body.user.id).toBe(user.id);
    const second = await pendingSignIn(user.email);
    expectError(await tf("verify-backup-code", { code: user.backupCodes[0] }, { cookie: second.pending }), 401, "INVALID_BACKUP_CODE");

    const fresh = await tf("generate-backup-codes", { password: PASSWORD }, { bearer: user.token });
    expect(fresh.body).toMatchObject({ status: true, backupCodes: expect.any(Array) });
    expectError(await tf("verify-backup-code", { code: user.backupCodes[1] }, { cookie: second.pending }), 401, "INVALID_BACKUP_CODE");
    expect((await tf("verify-backup-code", { code: fresh.body.backupCodes[0] }, { cookie: second.pending })).status).toBe(200);
  });

  it("email OTP: 6 digits by mail, valid 5 minutes, once", async () => {
    const user = await enrolled();
    const { pending } = await pendingSignIn(user.email);
    expect((await tf("send-otp", {}, { cookie: pending })).body).toEqual({ status: true });
    const mail = await sink.waitFor((m) => m.to.includes(user.email) && m.subject.startsWith("Your verification code"));
    const otp = /\b(\d{6})\b/.exec(mail.text)![1]!;
    expectError(await tf("verify-otp", { code: otp === "000000" ? "000001" : "000000" }, { cookie: pending }), 401, "INVALID_CODE");
    const done = await tf("verify-otp", { code: otp }, { cookie: pending });
    expect(done.status, done.text).toBe(200);
    expect(done.body.user.id).toBe(user.id);

    const late = await pendingSignIn(user.email);
    await tf("send-otp", {}, { cookie: late.pending });
    const lateMail = await sink.waitFor((m) => m.to.includes(user.email) && m !== mail && m.subject.startsWith("Your verification code"));
    server.clock.advance(4 * MINUTE + 59 * SECOND);
    // The pending sign-in lives 5 minutes from sign-in; the code 5 minutes from sending: both still alive.
    const lateOtp = /\b(\d{6})\b/.exec(lateMail.text)![1]!;
    expect((await tf("verify-otp", { code: lateOtp }, { cookie: late.pending })).status).toBe(200);
  });

  it("trustDevice: a 30-day cookie skips the second step, rotates on use, and dies with revoke-sessions", async () => {
    const user = await enrolled();
    const { pending } = await pendingSignIn(user.email);
    const done = await tf("verify-totp", { code: freshCode(user.secret), trustDevice: true }, { cookie: pending });
    const trustLine = done.headers.getSetCookie().find((c) => c.startsWith(`${TRUST}=`))!;
    expect(trustLine).toMatch(/Max-Age=2592000/);
    expect(trustLine).toMatch(/HttpOnly/i);
    const trust = trustLine.split(";")[0]!;

    const direct = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }, { cookie: trust });
    expect(direct.body.token).toEqual(expect.any(String));
    const rotated = cookieFrom(direct.headers, TRUST)!;
    expect(rotated).not.toBe(trust);
    // The old cookie was used up: a copy of it asks for the second step.
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }, { cookie: trust })).body).toMatchObject({ twoFactorRedirect: true });

    expect((await post(`${server.auth}/revoke-sessions`, {}, { bearer: direct.body.token })).status).toBe(200);
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }, { cookie: rotated })).body).toMatchObject({ twoFactorRedirect: true });
  });

  it("disable turns it off and forgets trusted devices", async () => {
    const user = await enrolled();
    const off = await tf("disable", { password: PASSWORD }, { bearer: user.token });
    expect(off.body).toEqual({ status: true });
    const direct = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD });
    expect(direct.body.user.twoFactorEnabled).toBe(false);
    expect(direct.body.token).toEqual(expect.any(String));
    expectError(await tf("generate-backup-codes", { password: PASSWORD }, { bearer: user.token }), 400, "TWO_FACTOR_NOT_ENABLED");
    expectError(await tf("get-totp-uri", { password: PASSWORD }, { bearer: user.token }), 400, "TOTP_NOT_ENABLED");
  });
});

describe("races", () => {
  it("the same TOTP code in two sign-ins at once: exactly one succeeds", async () => {
    const user = await enrolled();
    const a = await pendingSignIn(user.email);
    const b = await pendingSignIn(user.email);
    const c = freshCode(user.secret);
    const replies = await Promise.all([tf("verify-totp", { code: c }, { cookie: a.pending }), tf("verify-totp", { code: c }, { cookie: b.pending })]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it("the same backup code twice at once: exactly one succeeds", async () => {
    const user = await enrolled();
    const a = await pendingSignIn(user.email);
    const b = await pendingSignIn(user.email);
    const replies = await Promise.all([
      tf("verify-backup-code", { code: user.backupCodes[3] }, { cookie: a.pending }),
      tf("verify-backup-code", { code: user.backupCodes[3] }, { cookie: b.pending }),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
  });

  it("the same pending cookie with two right answers at once: one session", async () => {
    const user = await enrolled();
    const { pending } = await pendingSignIn(user.email);
    const before = await sessionsOf(user.id);
    const replies = await Promise.all([
      tf("verify-backup-code", { code: user.backupCodes[0] }, { cookie: pending }),
      tf("verify-backup-code", { code: user.backupCodes[1] }, { cookie: pending }),
    ]);
    expect(replies.map((r) => r.status).sort()).toEqual([200, 401]);
    expect(await sessionsOf(user.id)).toBe(before + 1);
  });
});

describe("bad input", () => {
  it("answers 4xx, never 5xx, for junk codes and junk cookies", async () => {
    const user = await enrolled();
    const { pending } = await pendingSignIn(user.email);
    for (const body of [{}, { code: 123456 }, { code: "x".repeat(65) }, { code: null }, { code: "12345678901234567890" }]) {
      const r = await tf("verify-totp", body, { cookie: pending });
      expect(r.status, r.text).toBeGreaterThanOrEqual(400);
      expect(r.status, r.text).toBeLessThan(500);
    }
    expectError(await tf("verify-totp", { code: "123456" }, { cookie: `${PENDING}=${"a".repeat(500)}` }), 401, "INVALID_TWO_FACTOR_COOKIE");
    expectError(await tf("verify-otp", { code: "123456" }, { cookie: pending }), 400, "OTP_HAS_EXPIRED");
  });
});

describe("the tRPC form", () => {
  it("twoFactor.enable and twoFactor.verifyTotp through /api/trpc", async () => {
    const user = await signUp(server);
    const enabled = await post(`${server.url}/api/trpc/twoFactor.enable`, { password: PASSWORD }, { bearer: user.token });
    expect(enabled.status, enabled.text).toBe(200);
    const { totpURI } = enabled.body.result.data;
    const verified = await post(`${server.url}/api/trpc/twoFactor.verifyTotp`, { code: freshCode(secretOf(totpURI)) }, { bearer: user.token });
    expect(verified.body.result.data.user.twoFactorEnabled).toBe(true);
  });
});
