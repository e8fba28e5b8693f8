import { createAuthClient } from "better-auth/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR, SECOND } from "../../harness/clock.ts";
import { get, post } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { PASSWORD, signUp } from "../../harness/admin-helpers.ts";
import { browserFlow, callbackUri, expectError, oidcProviders, tokenOf } from "../../harness/oauth-helpers.ts";

/** Stored provider tokens and accounts (docs/wire-contract.md §5): get-access-token, refresh-token, account-info, list/unlink. */

let oidc: TestOidcProvider;
let server: TestServer;

let n = 0;
function account(opts: { name?: string } = {}) {
  n += 1;
  const sub = `tok-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: `${sub}@example.test`, email_verified: true, name: opts.name ?? `Token ${n}`, picture: `https://img.example.test/${sub}.png` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "google"].map(callbackUri) });
  server = await startTestServer({ providers: oidcProviders(oidc) });
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

/** A user made by social sign-in: cookie and bearer token. */
async function socialUser(provider = "oidc") {
  const acct = account();
  const { cookie } = await browserFlow(server, oidc, provider, acct.sub);
  return { acct, cookie: cookie!, token: tokenOf(cookie!) };
}

const accessToken = (bearer: string, body: Record<string, unknown> = { providerId: "oidc" }) => post(`${server.auth}/get-access-token`, body, { bearer });
const inMs = (ms: number) => new Date(server.clock.now().getTime() + ms).toISOString();

describe("get-access-token and refresh-token", () => {
  it("answers the stored token while it is fresh, and refreshes it first within 5 s of expiry", async () => {
    const user = await socialUser();
    const first = await accessToken(user.token);
    expect(first.status, first.text).toBe(200);
    expect(first.body).toEqual({
      accessToken: expect.any(String),
      accessTokenExpiresAt: inMs(HOUR),
      scopes: ["openid", "email", "profile"],
      idToken: expect.stringMatching(/^ey/),
    });
    expect((await accessToken(user.token)).body.accessToken).toBe(first.body.accessToken);

    server.clock.advance(HOUR - 6 * SECOND);
    expect((await accessToken(user.token)).body.accessToken).toBe(first.body.accessToken);
    server.clock.advance(2 * SECOND); // 4 s left
    const refreshed = await accessToken(user.token);
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.accessToken).not.toBe(first.body.accessToken);
    expect(refreshed.body.accessTokenExpiresAt).toBe(inMs(HOUR));
    expect((await accessToken(user.token)).body.accessToken).toBe(refreshed.body.accessToken);
    // The refreshed token is the provider's: a live user-info call accepts it.
    expect((await get(`${server.auth}/account-info?accountId=${user.acct.sub}`, { bearer: user.token })).status).toBe(200);
  });

  it("refresh-token: refreshes now and answers the whole token set", async () => {
    const user = await socialUser();
    const before = await accessToken(user.token);
    const res = await post(`${server.auth}/refresh-token`, { providerId: "oidc", accountId: user.acct.sub }, { cookie: user.cookie });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.any(String),
      accessTokenExpiresAt: inMs(HOUR),
      refreshTokenExpiresAt: null,
      scope: "openid,email,profile", // better-auth's wire format: comma-joined
      idToken: expect.stringMatching(/^ey/),
      providerId: "oidc",
      accountId: user.acct.sub,
    });
    expect(res.body.accessToken).not.toBe(before.body.accessToken);
    expect((await accessToken(user.token)).body.accessToken).toBe(res.body.accessToken);
  });

  it("400 PROVIDER_NOT_FOUND, 400 ACCOUNT_NOT_FOUND, 401 without a session", async () => {
    const user = await socialUser();
    expectError(await accessToken(user.token, { providerId: "myspace" }), 400, "PROVIDER_NOT_FOUND");
    expectError(await accessToken(user.token, { providerId: "google" }), 400, "ACCOUNT_NOT_FOUND");
    expectError(await accessToken(user.token, { providerId: "oidc", accountId: "someone-else" }), 400, "ACCOUNT_NOT_FOUND");
    expectError(await post(`${server.auth}/refresh-token`, { providerId: "google" }, { bearer: user.token }), 400, "ACCOUNT_NOT_FOUND");
    expectError(await post(`${server.auth}/get-access-token`, { providerId: "oidc" }), 401, "UNAUTHORIZED");
    expectError(await post(`${server.auth}/get-access-token`, {}, { bearer: user.token }), 400, "VALIDATION_ERROR");
  });
});

describe("account-info", () => {
  it("calls the provider's user info live, with the session's bearer token or cookie", async () => {
    const user = await socialUser();
    oidc.setAccount({ ...user.acct, name: "Renamed At The Provider" });
    const res = await get(`${server.auth}/account-info?accountId=${user.acct.sub}`, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({
      user: { id: user.acct.sub, email: user.acct.email, name: "Renamed At The Provider", image: user.acct.picture, emailVerified: true },
      data: { sub: user.acct.sub, email: user.acct.email, email_verified: true, name: "Renamed At The Provider", picture: user.acct.picture },
    });
    const byCookie = await get(`${server.auth}/account-info?accountId=${user.acct.sub}`, { cookie: user.cookie });
    expect(byCookie.body).toEqual(res.body);
  });

  it("works for the google built-in (its userinfo endpoint)", async () => {
    const user = await socialUser("google");
    const res = await get(`${server.auth}/account-info?accountId=${user.acct.sub}`, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toEqual({ id: user.acct.sub, email: user.acct.email, name: user.acct.name, image: user.acct.picture, emailVerified: true });
  });

  it("only the caller's accounts: 400 ACCOUNT_NOT_FOUND otherwise; 401 without a session", async () => {
    const user = await socialUser();
    const other = await socialUser();
    expectError(await get(`${server.auth}/account-info?accountId=${other.acct.sub}`, { bearer: user.token }), 400, "ACCOUNT_NOT_FOUND");
    expectError(await get(`${server.auth}/account-info?accountId=nobody`, { bearer: user.token }), 400, "ACCOUNT_NOT_FOUND");
    expectError(await get(`${server.auth}/account-info?accountId=${user.acct.sub}`), 401, "UNAUTHORIZED");
    // better-auth 1.6: no accountId names no account.
    expectError(await get(`${server.auth}/account-info`, { bearer: user.token }), 400, "ACCOUNT_NOT_FOUND");
    const viaTrpc = await get(`${server.url}/api/trpc/accountInfo`, { bearer: user.token });
    expect(viaTrpc.status, viaTrpc.text).toBe(400);
    expect(viaTrpc.body.error.data.authCode).toBe("ACCOUNT_NOT_FOUND");
  });

  it("passes the provider's user as it came: a null picture is image: null, no picture no image (better-auth)", async () => {
    const user = await socialUser();
    oidc.setAccount({ ...user.acct, picture: null });
    const withNull = await get(`${server.auth}/account-info?accountId=${user.acct.sub}`, { bearer: user.token });
    expect(withNull.status, withNull.text).toBe(200);
    expect(withNull.body.user).toEqual({ id: user.acct.sub, email: user.acct.email, name: user.acct.name, image: null, emailVerified: true });
    const { picture: _, ...withoutPicture } = user.acct;
    oidc.setAccount(withoutPicture);
    const absent = await get(`${server.auth}/account-info?accountId=${user.acct.sub}`, { bearer: user.token });
    expect(absent.body.user).toEqual({ id: user.acct.sub, email: user.acct.email, name: user.acct.name, emailVerified: true });
  });

  it("providerId picks between accounts that share an accountId; without it they are 400 AMBIGUOUS_ACCOUNT", async () => {
    // The loopback provider gives one subject to both clients: `oidc` and `google` accounts of one sub.
    const user = await socialUser();
    const linked = await browserFlow(server, oidc, "google", user.acct.sub, {}, { cookie: user.cookie });
    expect(linked.callback.status, linked.callback.text).toBe(302);
    const info = (query: string) => get(`${server.auth}/account-info?${query}`, { bearer: user.token });
    expectError(await info(`accountId=${user.acct.sub}`), 400, "AMBIGUOUS_ACCOUNT");
    for (const providerId of ["oidc", "google"]) {
      const res = await info(`accountId=${user.acct.sub}&providerId=${providerId}`);
      expect(res.status, res.text).toBe(200);
      expect(res.body.user.id).toBe(user.acct.sub);
    }
    const alone = await socialUser();
    expectError(await get(`${server.auth}/account-info?accountId=${alone.acct.sub}&providerId=google`, { bearer: alone.token }), 400, "ACCOUNT_NOT_FOUND");
  });
});

describe("list-accounts and unlink-account", () => {
  it("lists every way to sign in, without tokens", async () => {
    const user = await signUp(server);
    const idp = account();
    await browserFlow(server, oidc, "oidc", idp.sub, {}, { cookie: user.cookie });
    const res = await get(`${server.auth}/list-accounts`, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    const byProvider = Object.fromEntries(res.body.map((a: { providerId: string }) => [a.providerId, a]));
    expect(byProvider.credential).toEqual({ id: expect.any(String), providerId: "credential", accountId: user.id, userId: user.id, scopes: [], createdAt: expect.any(String), updatedAt: expect.any(String) });
    expect(Object.keys(byProvider.oidc).sort()).toEqual(["accountId", "createdAt", "id", "providerId", "scopes", "updatedAt", "userId"]);
    expect(res.text).not.toMatch(/token|password|\$argon2/i);
    expectError(await get(`${server.auth}/list-accounts`), 401, "UNAUTHORIZED");
  });

  it("400 FAILED_TO_UNLINK_LAST_ACCOUNT for a social-only user's one account", async () => {
    const user = await socialUser();
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "oidc" }, { cookie: user.cookie }), 400, "FAILED_TO_UNLINK_LAST_ACCOUNT");
    expect((await get(`${server.auth}/list-accounts`, { bearer: user.token })).body).toHaveLength(1);
  });

  it("the credential account counts as a way to sign in, in both directions", async () => {
    const user = await signUp(server);
    const idp = account();
    await browserFlow(server, oidc, "oidc", idp.sub, {}, { cookie: user.cookie });
    const unlink = (body: Record<string, unknown>) => post(`${server.auth}/unlink-account`, body, { bearer: user.token });

    expect((await unlink({ providerId: "credential" })).body).toEqual({ status: true });
    expectError(await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
    expectError(await unlink({ providerId: "oidc" }), 400, "FAILED_TO_UNLINK_LAST_ACCOUNT");

    const other = await signUp(server);
    const otherIdp = account();
    await browserFlow(server, oidc, "oidc", otherIdp.sub, {}, { cookie: other.cookie });
    expect((await post(`${server.auth}/unlink-account`, { providerId: "oidc", accountId: otherIdp.sub }, { bearer: other.token })).status).toBe(200);
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "credential" }, { bearer: other.token }), 400, "FAILED_TO_UNLINK_LAST_ACCOUNT");
    // The unlinked provider account is free again: it now signs in as a new user.
    const again = await browserFlow(server, oidc, "oidc", otherIdp.sub);
    expect((await get(`${server.auth}/get-session`, { cookie: again.cookie! })).body.user.id).not.toBe(other.id);
  });

  it("unlinks by accountId when two accounts of one provider are linked", async () => {
    const user = await signUp(server);
    const [one, two] = [account(), account()];
    for (const idp of [one, two]) await browserFlow(server, oidc, "oidc", idp.sub, {}, { cookie: user.cookie });
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "oidc", accountId: "not-mine" }, { bearer: user.token }), 400, "ACCOUNT_NOT_FOUND");
    expect((await post(`${server.auth}/unlink-account`, { providerId: "oidc", accountId: two.sub }, { bearer: user.token })).status).toBe(200);
    const left = (await get(`${server.auth}/list-accounts`, { bearer: user.token })).body.map((a: { accountId: string }) => a.accountId);
    expect(left.sort()).toEqual([one.sub, user.id].sort());
  });

  it("400 PROVIDER_NOT_FOUND for an unknown provider, 400 ACCOUNT_NOT_FOUND for one not linked", async () => {
    const user = await signUp(server);
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "myspace" }, { bearer: user.token }), 400, "PROVIDER_NOT_FOUND");
    // better-auth's order: with one account, the last-account rule answers before the lookup.
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "google" }, { bearer: user.token }), 400, "FAILED_TO_UNLINK_LAST_ACCOUNT");
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "oidc" }), 401, "UNAUTHORIZED");
    await browserFlow(server, oidc, "oidc", account().sub, {}, { cookie: user.cookie });
    expectError(await post(`${server.auth}/unlink-account`, { providerId: "google" }, { bearer: user.token }), 400, "ACCOUNT_NOT_FOUND");
  });

  it("two unlinks racing for the last two accounts: exactly one wins", async () => {
    const user = await signUp(server);
    const idp = account();
    await browserFlow(server, oidc, "oidc", idp.sub, {}, { cookie: user.cookie });
    const results = await Promise.all(
      ["credential", "oidc"].map((providerId) => post(`${server.auth}/unlink-account`, { providerId }, { bearer: user.token })),
    );
    expect(results.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(results.find((r) => r.status === 400)!.body.code).toBe("FAILED_TO_UNLINK_LAST_ACCOUNT");
    expect((await get(`${server.auth}/list-accounts`, { bearer: user.token })).body).toHaveLength(1);
  });
});

describe("the better-auth client SDK, unchanged", () => {
  it("signIn.social, listAccounts, getAccessToken, accountInfo, unlinkAccount", async () => {
    const user = await socialUser();
    const client = createAuthClient({ baseURL: server.url, basePath: "/api/auth", fetchOptions: { auth: { type: "Bearer", token: user.token } } });
    const started = await client.signIn.social({ provider: "oidc", callbackURL: "/sdk", disableRedirect: true });
    expect(started.error).toBeNull();
    expect(started.data).toMatchObject({ redirect: false, url: expect.stringContaining(oidc.discovery.authorization_endpoint) });

    const accounts = await client.listAccounts();
    expect(accounts.data).toEqual([expect.objectContaining({ providerId: "oidc", accountId: user.acct.sub, scopes: ["openid", "email", "profile"] })]);
    const token = await client.getAccessToken({ providerId: "oidc" });
    expect(token.data).toMatchObject({ accessToken: expect.any(String), scopes: ["openid", "email", "profile"] });
    const info = await client.accountInfo({ query: { accountId: user.acct.sub } });
    expect(info.data?.user).toMatchObject({ id: user.acct.sub, email: user.acct.email });
    const unlink = await client.unlinkAccount({ providerId: "oidc" });
    expect(unlink.error).toMatchObject({ status: 400, code: "FAILED_TO_UNLINK_LAST_ACCOUNT" });
  });
});
