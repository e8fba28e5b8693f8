import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, MINUTE } from "../../harness/clock.ts";
import { cookieFrom, get, post, uniqueEmail } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { adminPost, bootstrapAdmin, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { browserFlow, callbackUri, expectError, oidcProviders, PUBLIC_URL, STATE_CLEARED } from "../../harness/oauth-helpers.ts";

/**
 * Linking (docs/wire-contract.md §5): explicit linking, the linking-safety rule, the pre-account-takeover
 * defence, trusted providers, and the ban and email-verification rules on social sign-in.
 */

const BANNED_MESSAGE = "Suspended: write to abuse@example.test";

let oidc: TestOidcProvider;
let smtp: SmtpSink;
let server: TestServer;
let strict: TestServer;
let admin: SignedInUser;

let n = 0;
function account(opts: { verified?: boolean; email?: string } = {}) {
  n += 1;
  const sub = `link-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: opts.email ?? `${sub}@example.test`, email_verified: opts.verified ?? true, name: `Linked ${n}` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "google"].map(callbackUri) });
  smtp = await startSmtpSink();
  server = await startTestServer({
    providers: oidcProviders(oidc),
    trustedProviders: ["google"],
    email: { smtpUrl: smtp.url },
    admin: { bannedUserMessage: BANNED_MESSAGE },
  });
  strict = await startTestServer({ providers: oidcProviders(oidc), emailAndPassword: { requireEmailVerification: true } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await strict?.close();
  await smtp?.close();
  await oidc?.close();
});

async function accountsOf(cookie: string) {
  const res = await get(`${server.auth}/list-accounts`, { cookie });
  expect(res.status, res.text).toBe(200);
  return res.body as { providerId: string; accountId: string; userId: string }[];
}

async function sessionOf(target: TestServer, credential: { cookie?: string; bearer?: string }) {
  return (await get(`${target.auth}/get-session`, credential)).body;
}

describe("explicit linking (/link-social)", () => {
  it("links a provider account to the signed-in user whatever its email; no new session", async () => {
    const user = await signUp(server);
    const other = account({ verified: false }); // another address, not even verified
    const { start, callback } = await browserFlow(server, oidc, "oidc", other.sub, { callbackURL: "/settings" }, { cookie: user.cookie });
    expect(start.body.redirect).toBe(true);
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/settings`);
    expect(cookieFrom(callback.headers)).toBeNull();
    const accounts = await accountsOf(user.cookie);
    expect(accounts.map((a) => [a.providerId, a.accountId]).sort()).toEqual([
      ["credential", user.id],
      ["oidc", other.sub],
    ]);
    // From now on that provider account signs in as this user (rule 1).
    const later = await browserFlow(server, oidc, "oidc", other.sub);
    expect((await sessionOf(server, { cookie: later.cookie! })).user.id).toBe(user.id);
  });

  it("needs a session", async () => {
    expectError(await post(`${server.auth}/link-social`, { provider: "oidc" }), 401, "UNAUTHORIZED");
  });

  it("409 ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER when the provider account belongs to someone else", async () => {
    const owner = account();
    await browserFlow(server, oidc, "oidc", owner.sub);
    const intruder = await signUp(server);
    const { callback } = await browserFlow(server, oidc, "oidc", owner.sub, {}, { cookie: intruder.cookie });
    expectError(callback, 409, "ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER");
    expect((await accountsOf(intruder.cookie)).map((a) => a.providerId)).toEqual(["credential"]);

    const redirected = await browserFlow(server, oidc, "oidc", owner.sub, { errorCallbackURL: "/link-failed" }, { cookie: intruder.cookie });
    expect(redirected.callback.status).toBe(302);
    expect(redirected.callback.headers.get("location")).toBe(`${PUBLIC_URL}/link-failed?error=ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER`);
  });

  it("linking an account already linked to the caller refreshes it", async () => {
    const user = await signUp(server);
    const mine = account();
    await browserFlow(server, oidc, "oidc", mine.sub, {}, { cookie: user.cookie });
    const before = await post(`${server.auth}/get-access-token`, { providerId: "oidc" }, { cookie: user.cookie });
    const again = await browserFlow(server, oidc, "oidc", mine.sub, { scopes: ["api:read"] }, { cookie: user.cookie });
    expect(again.callback.status, again.callback.text).toBe(302);
    const after = await post(`${server.auth}/get-access-token`, { providerId: "oidc" }, { cookie: user.cookie });
    expect(after.body.accessToken).not.toBe(before.body.accessToken);
    expect(after.body.scopes).toContain("api:read");
    expect(await accountsOf(user.cookie)).toHaveLength(2);
  });
});

describe("linking safety", () => {
  it("409 ACCOUNT_NOT_LINKED: an unverified provider email never links to an existing user", async () => {
    const local = await signUp(server);
    const claimant = account({ email: local.email, verified: false });
    const { callback } = await browserFlow(server, oidc, "oidc", claimant.sub);
    expectError(callback, 409, "ACCOUNT_NOT_LINKED");
    expect(callback.headers.getSetCookie()).toEqual([STATE_CLEARED]);
    // The local user is untouched.
    expect((await sessionOf(server, { bearer: local.token })).user.id).toBe(local.id);
    expect((await accountsOf(local.cookie)).map((a) => a.providerId)).toEqual(["credential"]);
    await signIn(server, local.email);
  });

  it("pre-account-takeover: the unproven registrant loses the password, the sessions and the links", async () => {
    // The attacker registers the victim's address first, without proving it.
    const squatter = await signUp(server, { email: uniqueEmail("victim") });
    const second = await signIn(server, squatter.email);
    expect((await sessionOf(server, { bearer: second.token })).user.id).toBe(squatter.id); // now cached
    const attackerIdp = account();
    await browserFlow(server, oidc, "oidc", attackerIdp.sub, {}, { cookie: squatter.cookie });
    expect(await accountsOf(squatter.cookie)).toHaveLength(2);

    // The owner signs in with a provider that verified the address.
    const owner = account({ email: squatter.email, verified: true });
    const { callback, cookie } = await browserFlow(server, oidc, "oidc", owner.sub);
    expect(callback.status, callback.text).toBe(302);
    const session = await sessionOf(server, { cookie: cookie! });
    expect(session.user).toMatchObject({ id: squatter.id, email: squatter.email, emailVerified: true });

    // Every way the squatter had in is gone.
    for (const s of [squatter, second]) {
      expect(await sessionOf(server, { bearer: s.token })).toBeNull();
      expect(await sessionOf(server, { cookie: s.cookie })).toBeNull();
    }
    expectError(await post(`${server.auth}/sign-in/email`, { email: squatter.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
    expect((await accountsOf(cookie!)).map((a) => [a.providerId, a.accountId])).toEqual([["oidc", owner.sub]]);
    // The squatter's own provider account no longer leads to the owner's user.
    const attacker = await browserFlow(server, oidc, "oidc", attackerIdp.sub);
    expect((await sessionOf(server, { cookie: attacker.cookie! })).user.id).not.toBe(squatter.id);
  });

  it("a verified local account keeps its password and sessions when a provider links to it", async () => {
    const local = await signUp(server, { email: uniqueEmail("verified") });
    expect((await post(`${server.auth}/send-verification-email`, { email: local.email })).status).toBe(200);
    const mail = await smtp.waitFor((m) => m.to.includes(local.email));
    expect((await get(onServer(linkFrom(mail, "/verify-email"), server.url))).status).toBe(200);

    const idp = account({ email: local.email });
    const { cookie } = await browserFlow(server, oidc, "oidc", idp.sub);
    expect((await sessionOf(server, { cookie: cookie! })).user.id).toBe(local.id);
    expect((await sessionOf(server, { bearer: local.token })).user.id).toBe(local.id);
    await signIn(server, local.email);
    expect((await accountsOf(cookie!)).map((a) => a.providerId).sort()).toEqual(["credential", "oidc"]);
  });

  it("trustedProviders: their addresses count as verified, for linking and for new users", async () => {
    const local = await signUp(server);
    const unverifiedAtGoogle = account({ email: local.email, verified: false });
    const { callback, cookie } = await browserFlow(server, oidc, "google", unverifiedAtGoogle.sub);
    expect(callback.status, callback.text).toBe(302);
    expect((await sessionOf(server, { cookie: cookie! })).user).toMatchObject({ id: local.id, emailVerified: true });

    const fresh = account({ verified: false });
    const created = await browserFlow(server, oidc, "google", fresh.sub);
    expect((await sessionOf(server, { cookie: created.cookie! })).user).toMatchObject({ email: fresh.email, emailVerified: true });
  });
});

describe("bans and email verification apply to social sign-in", () => {
  it("403 BANNED_USER with the configured message; an expired ban lifts itself", async () => {
    const idp = account();
    const first = await browserFlow(server, oidc, "oidc", idp.sub);
    const userId = (await sessionOf(server, { cookie: first.cookie! })).user.id;
    const ban = await adminPost(server, "ban-user", { userId, banReason: "spam", banExpiresIn: 3600 }, admin.token);
    expect(ban.status, ban.text).toBe(200);

    const refused = await browserFlow(server, oidc, "oidc", idp.sub, {});
    expectError(refused.callback, 403, "BANNED_USER");
    expect(refused.callback.body.message).toBe(BANNED_MESSAGE);
    expect(refused.callback.headers.getSetCookie()).toEqual([STATE_CLEARED]);
    const redirected = await browserFlow(server, oidc, "oidc", idp.sub, { errorCallbackURL: "/banned" });
    expect(redirected.callback.headers.get("location")).toBe(`${PUBLIC_URL}/banned?error=BANNED_USER`);

    server.clock.advance(HOUR + MINUTE);
    const back = await browserFlow(server, oidc, "oidc", idp.sub);
    expect(back.callback.status, back.callback.text).toBe(302);
    expect((await sessionOf(server, { cookie: back.cookie! })).user).toMatchObject({ id: userId, banned: false, banReason: null, banExpires: null });
  });

  it("a banned local user is not linked either", async () => {
    const local = await signUp(server);
    expect((await adminPost(server, "ban-user", { userId: local.id }, admin.token)).status).toBe(200);
    const idp = account({ email: local.email });
    expectError((await browserFlow(server, oidc, "oidc", idp.sub)).callback, 403, "BANNED_USER");
    const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select provider_id from accounts where user_id = ?", [local.id]);
    expect(rows.map((r: { provider_id: string }) => r.provider_id)).toEqual(["credential"]);
  });

  it("requireEmailVerification: 403 EMAIL_NOT_VERIFIED for a new user whose provider did not verify the address", async () => {
    const unverified = account({ verified: false });
    const refused = await browserFlow(strict, oidc, "oidc", unverified.sub);
    expectError(refused.callback, 403, "EMAIL_NOT_VERIFIED");
    expect(refused.callback.headers.getSetCookie()).toEqual([STATE_CLEARED]);
    const redirected = await browserFlow(strict, oidc, "oidc", unverified.sub, { errorCallbackURL: "/verify-first" });
    expect(redirected.callback.headers.get("location")).toBe(`${PUBLIC_URL}/verify-first?error=EMAIL_NOT_VERIFIED`);
    // No user was made: the address is still free.
    const signUpLater = await post(`${strict.auth}/sign-up/email`, { name: "Later", email: unverified.email, password: PASSWORD });
    expect(signUpLater.status, signUpLater.text).toBe(200);

    const verified = account();
    const ok = await browserFlow(strict, oidc, "oidc", verified.sub);
    expect(ok.callback.status, ok.callback.text).toBe(302);
    expect((await sessionOf(strict, { cookie: cookieFrom(ok.callback.headers)! })).user.emailVerified).toBe(true);
  });
});
