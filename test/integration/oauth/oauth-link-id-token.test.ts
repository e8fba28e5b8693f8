import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { browserFlow, callbackUri, expectError, oidcProviders, tokenOf } from "../../harness/oauth-helpers.ts";

/**
 * POST /link-social with `idToken` (better-auth 1.6's direct link): the token is verified like a
 * sign-in ID token (keys, iss, aud, exp, nonce, freshness, single use), then docs/wire-contract.md §5's
 * explicit linking applies: the provider account joins the caller whatever its email, 409 when it
 * belongs to someone else. Only from the user's own session (docs/wire-contract.md §6).
 */

let oidc: TestOidcProvider;
let server: TestServer;
let admin: SignedInUser;

let n = 0;
function account(opts: { verified?: boolean; email?: string } = {}) {
  n += 1;
  const sub = `lit-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: opts.email ?? `${sub}@example.test`, email_verified: opts.verified ?? true, name: `Link token ${n}` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "google"].map(callbackUri) });
  server = await startTestServer({ providers: oidcProviders(oidc) });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

const mint = async (sub: string, nonce?: string) => oidc.nativeTokens(oidc.postClient, sub, nonce ? { nonce } : {});

function linkWith(user: { token: string }, idToken: Record<string, unknown>, provider = "google"): Promise<Reply> {
  return post(`${server.auth}/link-social`, { provider, idToken }, { bearer: user.token });
}

async function accountsOf(token: string): Promise<string[][]> {
  const res = await get(`${server.auth}/list-accounts`, { bearer: token });
  expect(res.status, res.text).toBe(200);
  return res.body.map((a: { providerId: string; accountId: string }) => [a.providerId, a.accountId]).sort();
}

function expectLinked(res: Reply) {
  expect(res.status, res.text).toBe(200);
  // better-auth 1.6's answer for a direct link; no redirect, no state cookie, no session.
  expect(res.body).toEqual({ url: "", status: true, redirect: false });
  expect(res.headers.get("location")).toBeNull();
  expect(res.headers.getSetCookie()).toEqual([]);
  expect(res.headers.get("set-auth-token")).toBeNull();
}

describe(`link-social with an ID token (${testDialect})`, () => {
  it("links at once, whatever the email (even unverified); the tokens given are stored; then it signs in as this user", async () => {
    const user = await signUp(server);
    const other = account({ verified: false });
    const tokens = await mint(other.sub, "link-nonce");
    expectLinked(await linkWith(user, { token: tokens.idToken, nonce: "link-nonce", accessToken: tokens.accessToken }));
    expect(await accountsOf(user.token)).toEqual([["credential", user.id], ["google", other.sub]].sort());
    const stored = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: user.token });
    expect(stored.body).toMatchObject({ accessToken: tokens.accessToken, idToken: tokens.idToken });
    // Rule 1 from now on: a sign-in with that provider account is this user's.
    const later = await browserFlow(server, oidc, "google", other.sub);
    expect((await get(`${server.auth}/get-session`, { cookie: later.cookie! })).body.user.id).toBe(user.id);
  });

  it("over tRPC too", async () => {
    const user = await signUp(server);
    const other = account();
    const res = await post(`${server.url}/api/trpc/linkSocial`, { provider: "google", idToken: { token: (await mint(other.sub)).idToken } }, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result.data).toEqual({ url: "", status: true, redirect: false });
    expect(await accountsOf(user.token)).toContainEqual(["google", other.sub]);
  });

  it("an account the caller already has: 200, its tokens replaced", async () => {
    const user = await signUp(server);
    const other = account();
    expectLinked(await linkWith(user, { token: (await mint(other.sub)).idToken }));
    const again = await mint(other.sub);
    expectLinked(await linkWith(user, { token: again.idToken, accessToken: again.accessToken }));
    expect(await accountsOf(user.token)).toEqual([["credential", user.id], ["google", other.sub]].sort());
    expect((await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: user.token })).body.accessToken).toBe(again.accessToken);
  });

  it("409 ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER when it belongs to someone else; nothing moves", async () => {
    const owner = account();
    const signedIn = await post(`${server.auth}/sign-in/social`, { provider: "google", idToken: { token: (await mint(owner.sub)).idToken } });
    expect(signedIn.status, signedIn.text).toBe(200);
    const thief = await signUp(server);
    expectError(await linkWith(thief, { token: (await mint(owner.sub)).idToken }), 409, "ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER");
    expect(await accountsOf(thief.token)).toEqual([["credential", thief.id]]);
    expect(await accountsOf(signedIn.body.token)).toEqual([["google", owner.sub]]);
  });

  it("the sign-in token rules: bad token, wrong nonce, replay, a token from our own code flow, a stale one: 401 INVALID_TOKEN", async () => {
    const user = await signUp(server);
    const other = account();
    expectError(await linkWith(user, { token: "not-a-jwt" }), 401, "INVALID_TOKEN");
    const withNonce = (await mint(other.sub, "n-1")).idToken;
    expectError(await linkWith(user, { token: withNonce, nonce: "n-2" }), 401, "INVALID_TOKEN");

    // Used once (by a sign-in), never again for a link.
    const spent = (await mint(other.sub)).idToken;
    expect((await post(`${server.auth}/sign-in/social`, { provider: "google", idToken: { token: spent } })).status).toBe(200);
    expectError(await linkWith(user, { token: spent }), 401, "INVALID_TOKEN");

    // The id_token of a code flow, as get-access-token hands it to its user.
    const flowUser = account();
    const { cookie } = await browserFlow(server, oidc, "google", flowUser.sub);
    const stored = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: tokenOf(cookie!) });
    expectError(await linkWith(user, { token: stored.body.idToken }), 401, "INVALID_TOKEN");

    const realNow = server.clock.now();
    const stale = (await mint(account().sub)).idToken;
    try {
      // Past the 10 minutes and a minute of skew, by the provider's (real) clock.
      server.clock.set(new Date(Date.now() + 12 * MINUTE));
      expectError(await linkWith(user, { token: stale }), 401, "INVALID_TOKEN");
    } finally {
      server.clock.set(realNow);
    }
    expect(await accountsOf(user.token)).toEqual([["credential", user.id]]);
  });

  it("403 IMPERSONATION_NOT_ALLOWED from an impersonation session (before the token is looked at); 401 without a session", async () => {
    const user = await signUp(server);
    const other = account();
    const token = (await mint(other.sub)).idToken;
    const start = await adminPost(server, "impersonate-user", { userId: user.id }, admin.token);
    const imp = start.headers.get("set-auth-token")!;
    expectError(await post(`${server.auth}/link-social`, { provider: "google", idToken: { token } }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await post(`${server.auth}/link-social`, { provider: "google", idToken: { token } }), 401, "UNAUTHORIZED");
    // Neither refusal used the token up: the user's own session links with it.
    expectLinked(await linkWith(user, { token }));
  });

  it("400 ID_TOKEN_NOT_SUPPORTED for a provider that cannot check ID tokens; 400 PROVIDER_NOT_FOUND for an unknown one", async () => {
    const user = await signUp(server);
    const token = (await mint(account().sub)).idToken;
    expectError(await linkWith(user, { token }, "oidc"), 400, "ID_TOKEN_NOT_SUPPORTED");
    expectError(await linkWith(user, { token }, "myspace"), 400, "PROVIDER_NOT_FOUND");
  });
});
