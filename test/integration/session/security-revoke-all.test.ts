import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { cookieFrom, get, post, request, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * "Sign out everywhere" ends everything a session-holder could still finish (docs/security.md
 * "Sign out everywhere"): sessions, pending two-factor sign-ins, trusted devices, approved device
 * codes. The attack: whoever typed the old password holds a pending two-factor sign-in and
 * finishes it with a backup or relayed code after the owner changed the password and signed out
 * every other session. A change of password ends pending sign-ins even when sessions stay.
 */

const PENDING = "portcullis.two_factor";
const TRUST = "portcullis.trust_device";
const NEW_PASSWORD = "a brand new password";
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";

let server: TestServer;
let root: SignedInUser;
beforeAll(async () => {
  server = await startTestServer();
  root = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

interface Enrolled extends SignedInUser {
  secret: string;
  backupCodes: string[];
}

async function enrolled(): Promise<Enrolled> {
  const user = await signUp(server);
  const enabled = await post(`${server.auth}/two-factor/enable`, { password: PASSWORD }, { bearer: user.token });
  expect(enabled.status, enabled.text).toBe(200);
  const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
  server.clock.advance(30 * SECOND);
  const on = await post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()) }, { bearer: user.token });
  expect(on.status, on.text).toBe(200);
  return { ...user, secret, backupCodes: enabled.body.backupCodes };
}

/** The password typed somewhere else: a pending two-factor sign-in (its cookie, `name=value`). */
async function pendingSignIn(email: string, password = PASSWORD): Promise<string> {
  const reply = await post(`${server.auth}/sign-in/email`, { email, password });
  expect(reply.status, reply.text).toBe(200);
  expect(reply.body.twoFactorRedirect).toBe(true);
  return cookieFrom(reply.headers, PENDING)!;
}

const finishWithBackupCode = (pending: string, code: string) => post(`${server.auth}/two-factor/verify-backup-code`, { code }, { cookie: pending });

function expectRefused(res: Reply): void {
  expectError(res, 401, "INVALID_TWO_FACTOR_COOKIE");
  expect(res.headers.get("set-auth-token")).toBeNull();
  expect(cookieFrom(res.headers)).toBeNull();
}

async function stillWorks(pending: string, user: Enrolled): Promise<void> {
  const done = await finishWithBackupCode(pending, user.backupCodes[5]!);
  expect(done.status, done.text).toBe(200);
  expect(done.body.user.id).toBe(user.id);
}

describe(`revoke-all ends pending two-factor sign-ins (${testDialect})`, () => {
  it("the attack: change-password {revokeOtherSessions} from another session, then the pending sign-in's backup code is refused", async () => {
    const user = await enrolled();
    const pending = await pendingSignIn(user.email);
    const changed = await post(`${server.auth}/change-password`, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeOtherSessions: true }, { bearer: user.token });
    expect(changed.status, changed.text).toBe(200);
    expectRefused(await finishWithBackupCode(pending, user.backupCodes[0]!));
    // The code was not spent on the refused attempt: the owner can still use it.
    const own = await post(`${server.auth}/two-factor/verify-backup-code`, { code: user.backupCodes[0] }, { bearer: changed.body.token });
    expect(own.status, own.text).toBe(200);
  });

  it("revoke-sessions and revoke-other-sessions end pending sign-ins too", async () => {
    for (const path of ["/revoke-sessions", "/revoke-other-sessions"]) {
      const user = await enrolled();
      const pending = await pendingSignIn(user.email);
      expect((await post(`${server.auth}${path}`, {}, { bearer: user.token })).status).toBe(200);
      expectRefused(await finishWithBackupCode(pending, user.backupCodes[0]!));
    }
  });

  it("change-password without revokeOtherSessions ends a sign-in started with the old password; sessions stay", async () => {
    const user = await enrolled();
    const pending = await pendingSignIn(user.email);
    const changed = await post(`${server.auth}/change-password`, { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, { bearer: user.token });
    expect(changed.status, changed.text).toBe(200);
    expectRefused(await finishWithBackupCode(pending, user.backupCodes[0]!));
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body?.user.id).toBe(user.id);
    // A sign-in with the new password goes on as usual.
    await stillWorks(await pendingSignIn(user.email, NEW_PASSWORD), user);
  });

  it("admin revoke-user-sessions, ban-user and set-user-password end them (each caller keeps its own session rules)", async () => {
    const revoked = await enrolled();
    const p1 = await pendingSignIn(revoked.email);
    expect((await adminPost(server, "revoke-user-sessions", { userId: revoked.id }, root.token)).status).toBe(200);
    expectRefused(await finishWithBackupCode(p1, revoked.backupCodes[0]!));

    const banned = await enrolled();
    const p2 = await pendingSignIn(banned.email);
    expect((await adminPost(server, "ban-user", { userId: banned.id, banExpiresIn: 60 }, root.token)).status).toBe(200);
    server.clock.advance(61 * SECOND); // the ban is over: the pending sign-in must not outlive it
    expectRefused(await finishWithBackupCode(p2, banned.backupCodes[0]!));

    const reset = await enrolled();
    const p3 = await pendingSignIn(reset.email);
    expect((await adminPost(server, "set-user-password", { userId: reset.id, newPassword: NEW_PASSWORD }, root.token)).status).toBe(200);
    expectRefused(await finishWithBackupCode(p3, reset.backupCodes[0]!));
    expect((await get(`${server.auth}/get-session`, { bearer: reset.token })).body?.user.id).toBe(reset.id);
  });

  it("revoking one other session leaves a pending sign-in alone (control)", async () => {
    const user = await enrolled();
    const other = await post(`${server.auth}/two-factor/verify-backup-code`, { code: user.backupCodes[2] }, { cookie: await pendingSignIn(user.email) });
    expect(other.status, other.text).toBe(200);
    const pending = await pendingSignIn(user.email);
    expect((await post(`${server.auth}/revoke-session`, { token: other.body.token }, { bearer: user.token })).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: other.body.token })).body).toBeNull();
    await stillWorks(pending, user);
  });
});

describe(`revoke-all ends trusted devices and approved device codes (${testDialect})`, () => {
  it("a trusted device asks for the second step again after revoke-sessions", async () => {
    const user = await enrolled();
    const pending = await pendingSignIn(user.email);
    const trusted = await post(`${server.auth}/two-factor/verify-backup-code`, { code: user.backupCodes[1], trustDevice: true }, { cookie: pending });
    expect(trusted.status, trusted.text).toBe(200);
    const trust = cookieFrom(trusted.headers, TRUST)!;
    const skipped = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }, { cookie: trust });
    expect(skipped.body.twoFactorRedirect).toBeUndefined();
    expect((await post(`${server.auth}/revoke-sessions`, {}, { bearer: user.token })).status).toBe(200);
    const again = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }, { cookie: cookieFrom(skipped.headers, TRUST) ?? trust });
    expect(again.body.twoFactorRedirect).toBe(true);
  });

  it("a device code approved by a stolen session turns into no session once the owner signs out everywhere", async () => {
    const user = await signUp(server);
    const thief = await signIn(server, user.email);
    const form = (path: string, params: Record<string, string>) =>
      request("POST", `${server.auth}${path}`, { raw: new URLSearchParams(params).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
    const code = (await form("/device/code", { client_id: "tv-app" })).body;
    expect((await get(`${server.auth}/device?user_code=${code.user_code}`, { cookie: thief.cookie })).status).toBe(200);
    expect((await post(`${server.auth}/device/approve`, { userCode: code.user_code }, { cookie: thief.cookie })).status).toBe(200);
    expect((await post(`${server.auth}/revoke-sessions`, {}, { bearer: user.token })).status).toBe(200);
    const polled = await form("/device/token", { grant_type: GRANT, device_code: code.device_code, client_id: "tv-app" });
    expect(polled.status, polled.text).toBe(400);
    expect(polled.body.error).toBe("invalid_grant");
    expect(polled.body.access_token).toBeUndefined();
  });
});
