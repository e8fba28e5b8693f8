import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt } from "jose";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { cookieFrom, get, post, request } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { atServer, Browser, browserFlow, callbackUri, captureLogs, expectError, oidcProviders, PUBLIC_URL, STATE_CLEARED, STATE_COOKIE, startAndAuthorize, tokenOf } from "../../harness/oauth-helpers.ts";

/**
 * Social sign-in against a real OpenID provider on loopback (docs/wire-contract.md §5): the browser flow
 * over plain HTTP, the seed's three rules, and every state failure.
 */

let oidc: TestOidcProvider;
let server: TestServer;
const logs = captureLogs();
/** Every code, state and token seen in this file: none may reach the log. */
const secrets = new Set<string>();

let n = 0;
function account(opts: { verified?: boolean; email?: string; name?: string } = {}) {
  n += 1;
  const sub = `sub-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: opts.email ?? `${sub}@example.test`, email_verified: opts.verified ?? true, name: opts.name ?? `User ${n}` };
  oidc.setAccount(acct);
  return acct;
}

function remember(...values: (string | null | undefined)[]) {
  for (const v of values) if (v) secrets.add(v);
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "google", "oidc-form", "bad-google"].map(callbackUri) });
  const providers = oidcProviders(oidc);
  server = await startTestServer(
    {
      providers: {
        ...providers,
        "oidc-form": { ...providers.oidc, authorizationParams: { response_mode: "form_post" } },
        // The google built-in expecting Google's own issuer: an id_token from anyone else fails.
        "bad-google": { ...providers.google, issuer: "https://accounts.google.com", requireIssuerParameter: false },
      },
    },
    { logger: logs.logger },
  );
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

describe("the browser flow", () => {
  it("signs a new user in: authorize with PKCE S256, callback, session cookie only", async () => {
    const alice = account({ name: "Alice Social" });
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc", callbackURL: "/dashboard", newUserCallbackURL: "/welcome" });
    expect(start.status, start.text).toBe(200);
    expect(start.body.redirect).toBe(true);
    expect(start.headers.get("location")).toBe(start.body.url);

    const url = new URL(start.body.url);
    expect(`${url.origin}${url.pathname}`).toBe(oidc.discovery.authorization_endpoint);
    const q = url.searchParams;
    expect(q.get("response_type")).toBe("code");
    expect(q.get("client_id")).toBe(oidc.basicClient.clientId);
    expect(q.get("redirect_uri")).toBe(callbackUri("oidc"));
    expect(q.get("scope")).toBe("openid email profile");
    expect(q.get("code_challenge_method")).toBe("S256");
    expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(q.has("nonce")).toBe(false);

    const outcome = await oidc.authorize(start.body.url, { sub: alice.sub });
    if (outcome.kind !== "redirect") throw new Error("redirect expected");
    const back = new URL(outcome.location);
    expect(`${back.origin}${back.pathname}`).toBe(callbackUri("oidc"));
    expect(back.searchParams.get("state")).toBe(q.get("state"));
    remember(back.searchParams.get("code"), q.get("state"));

    const callback = await browser.get(atServer(server, outcome.location));
    expect(callback.status, callback.text).toBe(302);
    // A new user goes to newUserCallbackURL, resolved against the public URL.
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/welcome`);
    expect(callback.text).toBe("");
    expect(callback.headers.get("set-auth-token")).toBeNull();
    // The session cookie, and the state cookie cleared: it has served.
    const setCookie = callback.headers.getSetCookie();
    expect(setCookie).toHaveLength(2);
    expect(setCookie[0]).toMatch(/^portcullis\.session_token=[A-Za-z0-9_-]{43}; Max-Age=604800; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(setCookie[1]).toBe(`${STATE_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`);
    const cookie = cookieFrom(callback.headers)!;
    remember(tokenOf(cookie));

    const session = await get(`${server.auth}/get-session`, { cookie });
    expect(session.body.user).toMatchObject({ email: alice.email, emailVerified: true, name: "Alice Social", role: "user", image: null });
    const accounts = await get(`${server.auth}/list-accounts`, { cookie });
    expect(accounts.body).toEqual([
      {
        id: expect.any(String),
        providerId: "oidc",
        accountId: alice.sub,
        userId: session.body.user.id,
        scopes: ["openid", "email", "profile"],
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      },
    ]);
  });

  it("stores the provider's tokens encrypted, never in the clear", async () => {
    const bob = account();
    const { cookie } = await browserFlow(server, oidc, "oidc", bob.sub);
    const token = await post(`${server.auth}/get-access-token`, { providerId: "oidc" }, { cookie: cookie! });
    expect(token.status, token.text).toBe(200);
    remember(token.body.accessToken, token.body.idToken);
    const refreshed = await post(`${server.auth}/refresh-token`, { providerId: "oidc" }, { cookie: cookie! });
    remember(refreshed.body.accessToken, refreshed.body.refreshToken);
    const rows = await server.portcullis.app.orm.em
      .fork()
      .getConnection()
      .execute("select access_token, refresh_token, id_token from accounts where account_id = ?", [bob.sub]);
    const row = rows[0] as Record<string, string>;
    for (const column of ["access_token", "refresh_token", "id_token"]) {
      expect(row[column]).toMatch(/^k[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    }
    expect(JSON.stringify(row)).not.toContain(refreshed.body.accessToken);
    expect(JSON.stringify(row)).not.toContain(refreshed.body.refreshToken);
  });

  it("google: the id_token is checked against the provider's JWKS, with issuer, audience and nonce", async () => {
    const carol = account();
    const { start, callback, cookie } = await browserFlow(server, oidc, "google", carol.sub, { callbackURL: "/home" });
    const nonce = new URL(start.body.url).searchParams.get("nonce");
    expect(nonce).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(new URL(start.body.url).searchParams.get("scope")).toBe("openid email profile");
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/home`);
    const token = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { cookie: cookie! });
    remember(token.body.accessToken, token.body.idToken);
    const claims = decodeJwt(token.body.idToken);
    expect(claims).toMatchObject({ iss: oidc.issuer, aud: oidc.postClient.clientId, sub: carol.sub, nonce, email: carol.email });
    const session = await get(`${server.auth}/get-session`, { cookie: cookie! });
    expect(session.body.user).toMatchObject({ email: carol.email, emailVerified: true });
  });

  it("google: an id_token from another issuer fails with 500 OAUTH_PROVIDER_ERROR", async () => {
    const dave = account();
    // Its authorization response says nothing of the issuer (RFC 9207 is optional for it), so
    // the id_token's own `iss` check is what refuses it.
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "bad-google", dave.sub);
    const withoutIss = new URL(location);
    withoutIss.searchParams.delete("iss");
    const callback = await browser.get(withoutIss.toString());
    expectError(callback, 500, "OAUTH_PROVIDER_ERROR");
    expect(callback.body.message).toBe("The identity provider failed or answered unexpectedly");
    expect(callback.body.requestId).toEqual(expect.any(String));
    expect(cookieFrom(callback.headers)).toBeNull();
    const logged = logs.entries().find((e) => e.requestId === callback.body.requestId && e.msg === "oauth provider failure");
    expect(logged).toMatchObject({ provider: "bad-google", step: "user info", cause: { code: "ERR_JWT_CLAIM_VALIDATION_FAILED" } });
  });

  it("form_post: the POST callback answers 302 to the GET form, which signs in", async () => {
    const erin = account();
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc-form", callbackURL: "/after" });
    expect(new URL(start.body.url).searchParams.get("response_mode")).toBe("form_post");
    const outcome = await oidc.authorize(start.body.url, { sub: erin.sub });
    if (outcome.kind !== "form_post") throw new Error("form_post expected");
    expect(outcome.action).toBe(callbackUri("oidc-form"));
    remember(outcome.fields.code);
    // The provider's page posts cross-origin, form-encoded, without our cookie.
    const posted = await request("POST", atServer(server, outcome.action), {
      raw: new URLSearchParams(outcome.fields).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded", origin: oidc.issuer },
    });
    expect(posted.status, posted.text).toBe(302);
    expect(posted.headers.get("set-cookie")).toBeNull();
    const getForm = new URL(posted.headers.get("location")!);
    expect(`${getForm.origin}${getForm.pathname}`).toBe(callbackUri("oidc-form"));
    expect(getForm.searchParams.get("code")).toBe(outcome.fields.code);
    expect(getForm.searchParams.get("state")).toBe(outcome.fields.state);
    expect(getForm.searchParams.get("iss")).toBe(oidc.issuer);
    // The 302 to the GET form is a top-level navigation: the SameSite=Lax state cookie comes along.
    const callback = await browser.get(atServer(server, getForm.toString()));
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/after`);
    const session = await get(`${server.auth}/get-session`, { cookie: cookieFrom(callback.headers)! });
    expect(session.body.user.email).toBe(erin.email);
  });

  it("disableRedirect answers the URL without Location; scopes add to the provider's", async () => {
    const res = await post(`${server.auth}/sign-in/social`, { provider: "oidc", disableRedirect: true, scopes: ["offline_access", "email"] });
    expect(res.status, res.text).toBe(200);
    expect(res.body.redirect).toBe(false);
    expect(res.headers.get("location")).toBeNull();
    expect(new URL(res.body.url).searchParams.get("scope")).toBe("openid email profile offline_access");
  });

  it("works over tRPC: signIn.social, then the callback procedure sets the cookie", async () => {
    const frank = account();
    const browser = new Browser();
    const trpc = (path: string, body: unknown) => browser.post(`${server.url}/api/trpc/${path}`, body);
    const started = await trpc("signIn.social", { provider: "oidc", callbackURL: "/t" });
    expect(started.status, started.text).toBe(200);
    const url = started.body.result.data.url as string;
    const outcome = await oidc.authorize(url, { sub: frank.sub });
    if (outcome.kind !== "redirect") throw new Error("redirect expected");
    const back = new URL(outcome.location);
    const done = await trpc("callback", { provider: "oidc", code: back.searchParams.get("code"), state: back.searchParams.get("state"), iss: back.searchParams.get("iss") });
    expect(done.status, done.text).toBe(200);
    expect(done.body.result.data).toEqual({ redirect: true, url: `${PUBLIC_URL}/t` });
    const cookie = cookieFrom(done.headers)!;
    expect((await get(`${server.auth}/get-session`, { cookie })).body.user.email).toBe(frank.email);
    const unknown = await trpc("signIn.social", { provider: "nope" });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.data.authCode).toBe("PROVIDER_NOT_FOUND");
  });
});

describe("the seed's rules", () => {
  it("rule 1: an already linked account updates its tokens and gets a new session", async () => {
    const grace = account();
    const first = await browserFlow(server, oidc, "oidc", grace.sub, { callbackURL: "/cb", newUserCallbackURL: "/new" });
    expect(first.callback.headers.get("location")).toBe(`${PUBLIC_URL}/new`);
    const before = await post(`${server.auth}/get-access-token`, { providerId: "oidc" }, { cookie: first.cookie! });
    const second = await browserFlow(server, oidc, "oidc", grace.sub, { callbackURL: "/cb", newUserCallbackURL: "/new" });
    // Not a new user this time.
    expect(second.callback.headers.get("location")).toBe(`${PUBLIC_URL}/cb`);
    expect(second.cookie).not.toBe(first.cookie);
    const one = await get(`${server.auth}/get-session`, { cookie: first.cookie! });
    const two = await get(`${server.auth}/get-session`, { cookie: second.cookie! });
    expect(two.body.user.id).toBe(one.body.user.id);
    expect(two.body.session.id).not.toBe(one.body.session.id);
    const after = await post(`${server.auth}/get-access-token`, { providerId: "oidc" }, { cookie: second.cookie! });
    remember(before.body.accessToken, after.body.accessToken);
    expect(after.body.accessToken).not.toBe(before.body.accessToken);
    expect((await get(`${server.auth}/list-accounts`, { cookie: second.cookie! })).body).toHaveLength(1);
  });

  it("rule 2: a new provider account whose verified email matches links to that user", async () => {
    const heidi = account();
    const viaOidc = await browserFlow(server, oidc, "oidc", heidi.sub);
    const viaGoogle = await browserFlow(server, oidc, "google", heidi.sub, { newUserCallbackURL: "/new", callbackURL: "/old" });
    expect(viaGoogle.callback.headers.get("location")).toBe(`${PUBLIC_URL}/old`);
    const a = await get(`${server.auth}/get-session`, { cookie: viaOidc.cookie! });
    const b = await get(`${server.auth}/get-session`, { cookie: viaGoogle.cookie! });
    expect(b.body.user.id).toBe(a.body.user.id);
    // The earlier session of a verified user survives the link.
    expect(a.body).not.toBeNull();
    const accounts = await get(`${server.auth}/list-accounts`, { cookie: viaGoogle.cookie! });
    expect(accounts.body.map((x: { providerId: string }) => x.providerId).sort()).toEqual(["google", "oidc"]);
  });

  it("rule 3: a new email creates the user, emailVerified as the provider says", async () => {
    const ivan = account({ verified: false });
    const { callback, cookie } = await browserFlow(server, oidc, "oidc", ivan.sub);
    expect(callback.status, callback.text).toBe(302);
    const session = await get(`${server.auth}/get-session`, { cookie: cookie! });
    expect(session.body.user).toMatchObject({ email: ivan.email, emailVerified: false, role: "user" });
  });

  it("two callbacks racing for one new provider account: one user, one account, two sessions", async () => {
    const kim = account();
    // Two browsers (a laptop and a phone), each finishing its own flow.
    const flows: { browser: Browser; location: string }[] = [];
    for (let i = 0; i < 2; i++) {
      const browser = new Browser();
      flows.push({ browser, location: (await startAndAuthorize(server, oidc, browser, "oidc", kim.sub)).location });
    }
    const results = await Promise.all(flows.map((f) => f.browser.get(f.location)));
    expect(results.map((r) => r.status)).toEqual([302, 302]);
    const sessions = await Promise.all(results.map((r) => get(`${server.auth}/get-session`, { cookie: cookieFrom(r.headers)! })));
    expect(sessions[0]!.body.user.id).toBe(sessions[1]!.body.user.id);
    expect(sessions[0]!.body.session.id).not.toBe(sessions[1]!.body.session.id);
    expect((await get(`${server.auth}/list-accounts`, { cookie: cookieFrom(results[0]!.headers)! })).body).toHaveLength(1);
  });

  it("emails are stored lower-cased", async () => {
    const judy = account({ email: `Judy.${Date.now()}@Example.TEST` });
    const { cookie } = await browserFlow(server, oidc, "oidc", judy.sub);
    const session = await get(`${server.auth}/get-session`, { cookie: cookie! });
    expect(session.body.user.email).toBe(judy.email.toLowerCase());
  });
});

describe("callback failures", () => {
  /** A flow up to the provider's redirect back, in `browser`, which holds its state cookie. */
  async function started(provider = "oidc", body: Record<string, unknown> = {}) {
    const mallory = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, provider, mallory.sub, body);
    const back = new URL(location);
    remember(back.searchParams.get("code"), back.searchParams.get("state"));
    return { code: back.searchParams.get("code")!, state: back.searchParams.get("state")!, location, browser, cookie: browser.cookie! };
  }

  it("400 PROVIDER_NOT_FOUND for an unknown provider, on every OAuth endpoint", async () => {
    expectError(await post(`${server.auth}/sign-in/social`, { provider: "myspace" }), 400, "PROVIDER_NOT_FOUND");
    expectError(await get(`${server.auth}/callback/myspace?code=x&state=y`), 400, "PROVIDER_NOT_FOUND");
    const form = await request("POST", `${server.auth}/callback/myspace`, { raw: "code=x&state=y", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expectError(form, 400, "PROVIDER_NOT_FOUND");
  });

  it("400 INVALID_CALLBACK_REQUEST when code or state is missing", async () => {
    expectError(await get(`${server.auth}/callback/oidc?code=abc`), 400, "INVALID_CALLBACK_REQUEST");
    expectError(await get(`${server.auth}/callback/oidc`), 400, "INVALID_CALLBACK_REQUEST");
    const { state, browser } = await started();
    expectError(await browser.get(`${server.auth}/callback/oidc?state=${state}&iss=${encodeURIComponent(oidc.issuer)}`), 400, "INVALID_CALLBACK_REQUEST");
  });

  it("400 STATE_MISMATCH for an unknown state, and for a replayed one", async () => {
    expectError(await get(`${server.auth}/callback/oidc?code=abc&state=${"x".repeat(43)}`), 400, "STATE_MISMATCH");
    const { location, cookie } = await started();
    const first = await get(location, { cookie });
    expect(first.status, first.text).toBe(302);
    // Replayed with the very cookie that went with it: the state is used up.
    const replay = await get(location, { cookie });
    expectError(replay, 400, "STATE_MISMATCH");
    expect(replay.headers.getSetCookie()).toEqual([STATE_CLEARED]);
  });

  it("one state raced by five callbacks at once: exactly one session, the rest STATE_MISMATCH", async () => {
    const { location, cookie } = await started();
    const results = await Promise.all(Array.from({ length: 5 }, () => get(location, { cookie })));
    const winners = results.filter((r) => r.status === 302);
    expect(winners, results.map((r) => `${r.status} ${r.text}`).join("\n")).toHaveLength(1);
    expect(cookieFrom(winners[0]!.headers)).not.toBeNull();
    for (const loser of results.filter((r) => r.status !== 302)) {
      expectError(loser, 400, "STATE_MISMATCH");
      expect(loser.headers.getSetCookie()).toEqual([STATE_CLEARED]);
    }
  });

  it("400 STATE_MISMATCH once the state is 10 minutes old (injected clock)", async () => {
    const early = await started();
    server.clock.advance(9 * MINUTE + 59 * SECOND);
    expect((await early.browser.get(early.location)).status).toBe(302);
    const late = await started();
    server.clock.advance(10 * MINUTE);
    expectError(await late.browser.get(late.location), 400, "STATE_MISMATCH");
  });

  it("400 STATE_MISMATCH for a state issued for another provider, which is then used up", async () => {
    const { code, state, cookie } = await started("oidc");
    expectError(await get(`${server.auth}/callback/google?code=${code}&state=${state}`, { cookie }), 400, "STATE_MISMATCH");
    expectError(await get(`${server.auth}/callback/oidc?code=${code}&state=${state}`, { cookie }), 400, "STATE_MISMATCH");
  });

  it("errorCallbackURL: failures after the state redirect there with ?error=<code>", async () => {
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc", errorCallbackURL: "/oops?from=oauth" });
    const denied = await oidc.authorize(start.body.url, { deny: true });
    if (denied.kind !== "redirect") throw new Error("redirect expected");
    expect(new URL(denied.location).searchParams.get("error")).toBe("access_denied");
    const res = await browser.get(atServer(server, denied.location));
    expect(res.status, res.text).toBe(302);
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/oops?from=oauth&error=INVALID_CALLBACK_REQUEST&provider_error=access_denied`);
    expect(cookieFrom(res.headers)).toBeNull();

    const { code, state, cookie } = await started("oidc", { errorCallbackURL: `${PUBLIC_URL}/failed` });
    const crossed = await get(`${server.auth}/callback/google?code=${code}&state=${state}`, { cookie });
    expect(crossed.status).toBe(302);
    expect(crossed.headers.get("location")).toBe(`${PUBLIC_URL}/failed?error=STATE_MISMATCH`);
  });

  it("without errorCallbackURL a provider's error is a JSON 400", async () => {
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc" });
    const denied = await oidc.authorize(start.body.url, { deny: true });
    if (denied.kind !== "redirect") throw new Error("redirect expected");
    expectError(await browser.get(atServer(server, denied.location)), 400, "INVALID_CALLBACK_REQUEST");
  });

  it("403 INVALID_CALLBACK_URL for an untrusted callbackURL, errorCallbackURL or newUserCallbackURL", async () => {
    for (const key of ["callbackURL", "errorCallbackURL", "newUserCallbackURL"]) {
      for (const url of ["https://evil.example/steal", "//evil.example/x", "javascript:alert(1)"]) {
        expectError(await post(`${server.auth}/sign-in/social`, { provider: "oidc", [key]: url }), 403, "INVALID_CALLBACK_URL");
      }
    }
  });

  it("the provider enforces PKCE: a code presented with another flow's verifier fails with 500 OAUTH_PROVIDER_ERROR", async () => {
    const { code } = await started(); // issued for the first flow's challenge, never redeemed
    const browser = new Browser();
    const other = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc" });
    const otherState = new URL(other.body.url).searchParams.get("state")!;
    remember(otherState);
    const res = await browser.get(`${server.auth}/callback/oidc?code=${code}&state=${otherState}&iss=${encodeURIComponent(oidc.issuer)}`);
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    expect(res.headers.getSetCookie()).toEqual([STATE_CLEARED]);
    const logged = logs.entries().find((e) => e.requestId === res.body.requestId && e.msg === "oauth provider failure");
    expect(logged).toMatchObject({ step: "token exchange", cause: { kind: "status", status: 400, oauthError: { error: "invalid_grant" } } });
  });
});

describe("logs", () => {
  it("never carry a code, a state or a token", () => {
    expect(secrets.size).toBeGreaterThan(10);
    const text = logs.lines.join("\n");
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
