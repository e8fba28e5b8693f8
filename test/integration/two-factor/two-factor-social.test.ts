import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { SECOND } from "../../harness/clock.ts";
import { cookieFrom, post } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { oidcProviders } from "../../harness/oauth-helpers.ts";

/**
 * OAuth sign-in follows better-auth (no second step) unless `twoFactor.enforceOnSocial`.
 * Real ID tokens from a real OpenID provider (the native-app sign-in of docs/wire-contract.md §9).
 */

let oidc: TestOidcProvider;
let lenient: TestServer;
let strict: TestServer;

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: [] });
  const { google } = oidcProviders(oidc);
  lenient = await startTestServer({ providers: { google } });
  strict = await startTestServer({ providers: { google }, twoFactor: { enforceOnSocial: true } });
});
afterAll(async () => {
  await lenient?.close();
  await strict?.close();
  await oidc?.close();
});

let n = 0;
/**
 * A user with a password (enabling two-factor asks for it) and two-factor on, whose address the
 * provider vouches for. `verified`: the address was proven (here: marked so, as the verification
 * link would); unproven, the provider sign-in is a takeover.
 */
async function socialUserWith2fa(s: TestServer, verified = true) {
  n += 1;
  const sub = `tf-social-${Date.now().toString(36)}-${n}`;
  const email = `${sub}@example.test`;
  oidc.setAccount({ sub, email, email_verified: true, name: "Social" });
  // Sign up with a password first (enabling two-factor asks for it), then sign in with the provider: it links (verified email).
  const signedUp = await post(`${s.auth}/sign-up/email`, { name: "Social", email, password: "password123" });
  expect(signedUp.status, signedUp.text).toBe(200);
  if (verified) await s.portcullis.app.orm.em.fork().getConnection().execute("update users set email_verified = ? where email = ?", [true, email]);
  const enabled = await post(`${s.auth}/two-factor/enable`, { password: "password123" }, { bearer: signedUp.body.token });
  const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
  s.clock.advance(30 * SECOND);
  expect((await post(`${s.auth}/two-factor/verify-totp`, { code: totpCode(secret, s.clock.now().getTime()) }, { bearer: signedUp.body.token })).status).toBe(200);
  const idToken = async () => (await oidc.nativeTokens(oidc.postClient, sub, {})).idToken;
  return { email, secret, idToken };
}

describe("twoFactor.enforceOnSocial", () => {
  it("off (the default, as better-auth): a provider sign-in of a 2FA user gets a session at once", async () => {
    const u = await socialUserWith2fa(lenient);
    const res = await post(`${lenient.auth}/sign-in/social`, { provider: "google", idToken: { token: await u.idToken() } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ redirect: false, token: expect.any(String), user: { email: u.email, twoFactorEnabled: true } });
  });

  it("on: the provider sign-in ends in a pending sign-in that the second step completes", async () => {
    const u = await socialUserWith2fa(strict);
    const res = await post(`${strict.auth}/sign-in/social`, { provider: "google", idToken: { token: await u.idToken() } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp", "otp"] });
    expect(res.headers.get("set-auth-token")).toBeNull();
    const pending = cookieFrom(res.headers, "portcullis.two_factor")!;
    strict.clock.advance(30 * SECOND);
    const done = await post(`${strict.auth}/two-factor/verify-totp`, { code: totpCode(u.secret, strict.clock.now().getTime()) }, { cookie: pending });
    expect(done.status, done.text).toBe(200);
    expect(done.body.user.email).toBe(u.email);
  });
});

describe("the takeover of an unproven account", () => {
  it("drops the two-factor the squatter enrolled: the provider's user signs in, and no second step is asked", async () => {
    const u = await socialUserWith2fa(strict, false);
    const res = await post(`${strict.auth}/sign-in/social`, { provider: "google", idToken: { token: await u.idToken() } });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ token: expect.any(String), user: { email: u.email, emailVerified: true, twoFactorEnabled: false } });
    const rows = await strict.portcullis.app.orm.em.fork().getConnection().execute("select count(*) as n from two_factors t join users u on u.id = t.user_id where u.email = ?", [u.email]);
    expect(Number(rows[0].n)).toBe(0);
  });
});
