import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { SECOND } from "../../harness/clock.ts";
import { cookieFrom, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * Two-factor around the edges: impersonation never changes it (docs/wire-contract.md §6), an
 * admin resets it (audited), it shows in admin listings, the module switches off, and the reset
 * of an unproven account drops a second factor its squatter set up.
 */

let sink: SmtpSink;
let server: TestServer;
let off: TestServer;
let noOtp: TestServer;
let admin: SignedInUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url } });
  off = await startTestServer({ twoFactor: { enabled: false } });
  noOtp = await startTestServer({ twoFactor: { otp: { enabled: false } } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await off?.close();
  await noOtp?.close();
  await sink?.close();
});

async function enroll(s: TestServer, user: SignedInUser): Promise<string> {
  const enabled = await post(`${s.auth}/two-factor/enable`, { password: PASSWORD }, { bearer: user.token });
  expect(enabled.status, enabled.text).toBe(200);
  const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
  s.clock.advance(30 * SECOND);
  const verified = await post(`${s.auth}/two-factor/verify-totp`, { code: totpCode(secret, s.clock.now().getTime()) }, { bearer: user.token });
  expect(verified.status, verified.text).toBe(200);
  return secret;
}

const signInReply = (s: TestServer, email: string) => post(`${s.auth}/sign-in/email`, { email, password: PASSWORD });

describe("impersonation", () => {
  it("an impersonation session cannot enable, disable, read the URI of or reset two-factor, nor generate backup codes", async () => {
    const target = await signUp(server);
    await enroll(server, target);
    const started = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
    expect(started.status, started.text).toBe(200);
    const as = started.body.session.token as string;
    for (const path of ["enable", "disable", "get-totp-uri", "generate-backup-codes"]) {
      expectError(await post(`${server.auth}/two-factor/${path}`, { password: PASSWORD }, { bearer: as }), 403, "IMPERSONATION_NOT_ALLOWED");
    }
    expectError(await adminPost(server, "reset-two-factor", { userId: target.id }, as), 403, "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD");
  });

  it("an impersonation session cannot activate an enrollment the user left unverified", async () => {
    const target = await signUp(server);
    const enabled = await post(`${server.auth}/two-factor/enable`, { password: PASSWORD }, { bearer: target.token });
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    const as = (await adminPost(server, "impersonate-user", { userId: target.id }, admin.token)).body.session.token as string;
    server.clock.advance(30 * SECOND);
    const code = totpCode(secret, server.clock.now().getTime());
    expectError(await post(`${server.auth}/two-factor/verify-totp`, { code }, { bearer: as }), 403, "IMPERSONATION_NOT_ALLOWED");
  });
});

describe("admin", () => {
  it("removing a user removes its two-factor rows with it: enrollment, backup codes, pending sign-ins", async () => {
    const user = await signUp(server);
    await enroll(server, user);
    expect((await signInReply(server, user.email)).body).toMatchObject({ twoFactorRedirect: true });
    const conn = server.portcullis.app.orm.em.fork().getConnection();
    const held = async () => {
      const out: Record<string, number> = {};
      for (const table of ["two_factors", "two_factor_backup_codes", "two_factor_challenges"]) {
        out[table] = Number((await conn.execute(`select count(*) as n from ${table} where user_id = ?`, [user.id]))[0].n);
      }
      return out;
    };
    expect(await held()).toEqual({ two_factors: 1, two_factor_backup_codes: 10, two_factor_challenges: 1 });
    expect((await adminPost(server, "remove-user", { userId: user.id }, admin.token)).status).toBe(200);
    expect(await held()).toEqual({ two_factors: 0, two_factor_backup_codes: 0, two_factor_challenges: 0 });
  });

  it("sees twoFactorEnabled in listings and resets a user's two-factor, audited", async () => {
    const user = await signUp(server);
    await enroll(server, user);
    const listed = await adminGet(server, "list-users", { searchValue: user.email, searchField: "email" }, admin.token);
    expect(listed.body.users[0]).toMatchObject({ id: user.id, twoFactorEnabled: true });

    const reset = await adminPost(server, "reset-two-factor", { userId: user.id }, admin.token);
    expect(reset.status, reset.text).toBe(200);
    expect(reset.body).toEqual({ success: true });
    const direct = await signInReply(server, user.email);
    expect(direct.body.token).toEqual(expect.any(String));
    expect(direct.body.user.twoFactorEnabled).toBe(false);
    const events = (await adminGet(server, "list-audit-events", { limit: 5 }, admin.token)).body.events as any[];
    expect(events.find((e) => e.action === "reset-two-factor")).toMatchObject({ targetId: user.id, actorId: admin.id });

    const plain = await signUp(server);
    expectError(await adminPost(server, "reset-two-factor", { userId: user.id }, plain.token), 403, "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD");
    expectError(await adminPost(server, "reset-two-factor", { userId: "00000000-0000-4000-8000-000000000000" }, admin.token), 404, "USER_NOT_FOUND");
  });
});

describe("configuration", () => {
  it("twoFactor.enabled: false answers 404 on every two-factor route", async () => {
    const user = await signUp(off);
    for (const path of ["enable", "disable", "get-totp-uri", "generate-backup-codes", "verify-totp", "send-otp", "verify-otp", "verify-backup-code"]) {
      expectError(await post(`${off.auth}/two-factor/${path}`, { password: PASSWORD, code: "123456" }, { bearer: user.token }), 404, "NOT_FOUND");
    }
  });

  it("otp.enabled: false leaves otp out of the methods and answers OTP_NOT_CONFIGURED", async () => {
    const user = await signUp(noOtp);
    await enroll(noOtp, user);
    const reply = await signInReply(noOtp, user.email);
    expect(reply.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp"] });
    const pending = cookieFrom(reply.headers, "portcullis.two_factor")!;
    expectError(await post(`${noOtp.auth}/two-factor/send-otp`, {}, { cookie: pending }), 400, "OTP_NOT_CONFIGURED");
  });
});

describe("unproven accounts", () => {
  it("the reset of an unverified account drops the second factor its squatter enrolled", async () => {
    const squatter = await signUp(server);
    await enroll(server, squatter);
    expect((await signInReply(server, squatter.email)).body).toMatchObject({ twoFactorRedirect: true });

    await post(`${server.auth}/request-password-reset`, { email: squatter.email });
    const mail = await sink.waitFor((m) => m.to.includes(squatter.email) && m.subject === "Reset your password");
    const token = new URL(onServer(linkFrom(mail, "/reset-password/"), server.url)).pathname.split("/").pop()!;
    expect((await post(`${server.auth}/reset-password`, { token, newPassword: "the owner's password" })).status).toBe(200);

    const owner = await post(`${server.auth}/sign-in/email`, { email: squatter.email, password: "the owner's password" });
    expect(owner.body.token).toEqual(expect.any(String));
    expect(owner.body.user.twoFactorEnabled).toBe(false);
  });
});
