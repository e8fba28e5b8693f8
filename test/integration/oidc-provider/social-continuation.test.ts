/**
 * Social sign-in for an authorize request (docs/oidc-provider.md "Pages"): `POST /sign-in/social`
 * carries the signed `oauth_query`, the OAuth state keeps it through the provider's round trip
 * (a real OpenID provider on loopback, test/harness/oidc.ts), and the callback continues the
 * authorize request (consent, then the relying party with a code) instead of going to callbackURL.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { SECOND } from "../../harness/clock.ts";
import { cookieFrom, post, request, uniqueEmail } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { Browser, callbackUri, expectError, oidcProviders, PUBLIC_URL, STATE_COOKIE, startAndAuthorize } from "../../harness/oauth-helpers.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeUrl, pkce, REDIRECT, registerClient, tokenRequest, userinfo } from "./helpers.ts";

type Client = { clientId: string; clientSecret: string | null };

let oidc: TestOidcProvider;
let server: TestServer;
/** Asks for consent. */
let rp: Client;
/** skip_consent: straight back with a code. */
let trusted: Client;

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: [callbackUri("oidc")] });
  // enforceOnSocial: a two-factor user's social sign-in is pending until the second step.
  server = await startTestServer({ providers: { oidc: oidcProviders(oidc).oidc }, twoFactor: { enforceOnSocial: true } });
  rp = await registerClient(server);
  trusted = await registerClient(server, { skipConsent: true });
});
afterAll(async () => {
  await server?.close();
  await oidc?.close();
});

let n = 0;
function account(email?: string) {
  n += 1;
  const sub = `cont-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: email ?? `${sub}@example.test`, email_verified: true, name: `Social ${n}` };
  oidc.setAccount(acct);
  return acct;
}

/** GET /oauth2/authorize without a session: the built-in sign-in page with the signed request. */
async function signInPageQuery(client: Client, extra: Record<string, string> = {}) {
  const p = pkce();
  const url = authorizeUrl(server, { response_type: "code", client_id: client.clientId, redirect_uri: REDIRECT, scope: "openid email", state: "rp-state", nonce: "rp-nonce", code_challenge: p.challenge, code_challenge_method: "S256", ...extra });
  const res = await request("GET", url, { headers: { accept: "text/html" } });
  expect(res.status, res.text).toBe(302);
  const page = new URL(res.headers.get("location")!);
  expect(page.origin + page.pathname).toBe(`${PUBLIC_URL}/sign-in`);
  return { query: page.search.slice(1), verifier: p.verifier };
}

/** The social round trip with `body`; the callback's answer. */
async function socialRoundTrip(browser: Browser, sub: string, body: Record<string, unknown>, link = false) {
  const { location } = await startAndAuthorize(server, oidc, browser, "oidc", sub, body, link);
  return { location, callback: await browser.get(location) };
}

function expectCodeAt(url: URL): string {
  expect(url.origin + url.pathname).toBe(REDIRECT);
  expect(url.searchParams.get("state")).toBe("rp-state");
  expect(url.searchParams.get("iss")).toBe(`${PUBLIC_URL}/api/auth`);
  return url.searchParams.get("code")!;
}

/** The code at the relying party's token endpoint: the ID token's subject, checked against the signed-in user. */
async function redeem(client: Client, code: string, verifier: string, browser: Browser) {
  const res = await tokenRequest(server, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, code_verifier: verifier }, client);
  expect(res.status, res.text).toBe(200);
  const claims = decodeJwt(res.body.id_token);
  const session = await browser.get(`${server.auth}/get-session`);
  expect(session.status, session.text).toBe(200);
  expect(claims.sub).toBe(session.body.user.id);
  expect(claims.nonce).toBe("rp-nonce");
  return { claims, accessToken: res.body.access_token as string, email: session.body.user.email as string };
}

describe("social sign-in with oauth_query", () => {
  it("the callback continues to the consent page, which ends with a code for the social user", async () => {
    const acct = account();
    const { query, verifier } = await signInPageQuery(rp);
    const browser = new Browser();
    const { callback } = await socialRoundTrip(browser, acct.sub, { oauth_query: query, callbackURL: "/app", errorCallbackURL: "/app/failed" });
    expect(callback.status, callback.text).toBe(302);
    expect(browser.value("portcullis.session_token")).not.toBeNull();
    expect(browser.value(STATE_COOKIE)).toBeNull();
    const consentPage = new URL(callback.headers.get("location")!);
    expect(consentPage.origin + consentPage.pathname).toBe(`${PUBLIC_URL}/consent`);
    expect(consentPage.searchParams.get("client_id")).toBe(rp.clientId);

    const decided = await browser.post(`${server.auth}/oauth2/consent`, { accept: true, oauth_query: consentPage.search.slice(1) });
    expect(decided.status, decided.text).toBe(200);
    const code = expectCodeAt(new URL(decided.body.url));
    const { accessToken, email } = await redeem(rp, code, verifier, browser);
    expect(email).toBe(acct.email);
    expect((await userinfo(server, accessToken)).body.email).toBe(acct.email);
  });

  it("a trusted client: the callback goes straight back to the client with a code; prompt=login is met", async () => {
    const acct = account();
    const { query, verifier } = await signInPageQuery(trusted, { prompt: "login" });
    const browser = new Browser();
    const { callback } = await socialRoundTrip(browser, acct.sub, { oauth_query: query, callbackURL: "/app", disableRedirect: true });
    expect(callback.status, callback.text).toBe(302);
    const code = expectCodeAt(new URL(callback.headers.get("location")!));
    expect((await redeem(trusted, code, verifier, browser)).email).toBe(acct.email);
  });

  it("a large authorize request (an 8 KB claims parameter) rides in the state row and still ends with a code", async () => {
    const acct = account();
    const claims = JSON.stringify({ userinfo: { email: null }, padding: "x".repeat(8000) });
    const { query, verifier } = await signInPageQuery(trusted, { claims });
    expect(query.length).toBeGreaterThan(8000);
    const browser = new Browser();
    const { callback } = await socialRoundTrip(browser, acct.sub, { oauth_query: query, callbackURL: "/app" });
    expect(callback.status, callback.text).toBe(302);
    const code = expectCodeAt(new URL(callback.headers.get("location")!));
    expect((await redeem(trusted, code, verifier, browser)).email).toBe(acct.email);
  });

  it("without oauth_query the callback goes to callbackURL as always", async () => {
    const acct = account();
    const { callback } = await socialRoundTrip(new Browser(), acct.sub, { callbackURL: "/app" });
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/app`);
  });

  it("a tampered or expired oauth_query is refused at the start: 400 INVALID_OAUTH_QUERY, no state", async () => {
    const { query } = await signInPageQuery(trusted);
    const tampered = query.replace("state=rp-state", "state=other");
    for (const bad of [tampered, `${query}x`, query.replace(/sig=[^&]+/, "sig=AAAA")]) {
      const res = await post(`${server.auth}/sign-in/social`, { provider: "oidc", oauth_query: bad });
      expectError(res, 400, "INVALID_OAUTH_QUERY");
      expect(cookieFrom(res.headers, STATE_COOKIE)).toBeNull();
      expect(res.headers.get("location")).toBeNull();
    }
    server.clock.advance(601 * SECOND);
    expectError(await post(`${server.auth}/sign-in/social`, { provider: "oidc", oauth_query: query }), 400, "INVALID_OAUTH_QUERY");
  });

  it("an oauth_query that expires during the round trip fails the callback before any sign-in", async () => {
    const acct = account();
    const { query } = await signInPageQuery(trusted);
    server.clock.advance(300 * SECOND); // the user read the sign-in page for a while...
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub, { oauth_query: query, callbackURL: "/app", errorCallbackURL: "/app/failed" });
    server.clock.advance(360 * SECOND); // ...and the provider's page: the request expired, the state did not.
    const callback = await browser.get(location);
    expect(callback.status, callback.text).toBe(302);
    const failed = new URL(callback.headers.get("location")!);
    expect(failed.origin + failed.pathname).toBe(`${PUBLIC_URL}/app/failed`);
    expect(failed.searchParams.get("error")).toBe("INVALID_OAUTH_QUERY");
    expect(cookieFrom(callback.headers)).toBeNull();
  });

  it("a client disabled during the round trip: the browser is shown the error page, never sent to the client; it is signed in", async () => {
    const acct = account();
    const doomed = await registerClient(server, { skipConsent: true });
    const { query } = await signInPageQuery(doomed);
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub, { oauth_query: query, callbackURL: "/app" });
    await server.portcullis.app.orm.em.fork().getConnection().execute("update oauth_clients set disabled = ? where client_id = ?", [true, doomed.clientId]);
    const callback = await browser.get(location, { headers: { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" } });
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/api/auth/error?error=CLIENT_DISABLED`);
    // The sign-in itself succeeded, as when a sign-in body's oauth_query fails to continue.
    expect(browser.value("portcullis.session_token")).not.toBeNull();
  });

  it("the state is single-use: its callback replayed with its cookie is refused and issues nothing", async () => {
    const acct = account();
    const { query } = await signInPageQuery(trusted);
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub, { oauth_query: query, callbackURL: "/app" });
    const stateCookie = browser.cookie!;
    const first = await browser.get(location);
    expect(first.status, first.text).toBe(302);
    expectCodeAt(new URL(first.headers.get("location")!));
    const replay = await request("GET", location, { cookie: stateCookie });
    expectError(replay, 400, "STATE_MISMATCH");
    expect(replay.headers.get("location")).toBeNull();
    expect(cookieFrom(replay.headers)).toBeNull();
  });
});

describe("link-social and two-factor", () => {
  it("link-social ignores a valid oauth_query (the link goes to its callbackURL, no code) and refuses a forged one", async () => {
    const signedUp = await post(`${server.auth}/sign-up/email`, { name: "Linker", email: uniqueEmail("link"), password: "password123" });
    const cookie = cookieFrom(signedUp.headers)!;
    const { query } = await signInPageQuery(trusted);
    const forged = await new Browser(cookie).post(`${server.auth}/link-social`, { provider: "oidc", oauth_query: query.replace("state=rp-state", "state=x") });
    expectError(forged, 400, "INVALID_OAUTH_QUERY");

    const acct = account();
    const browser = new Browser(cookie);
    const { callback } = await socialRoundTrip(browser, acct.sub, { oauth_query: query, callbackURL: "/linked" }, true);
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/linked`);
    expect(cookieFrom(callback.headers)).toBeNull();
    const accounts = await browser.get(`${server.auth}/list-accounts`);
    expect(accounts.body.map((a: { providerId: string }) => a.providerId)).toContain("oidc");
  });

  it("a pending two-factor sign-in goes to callbackURL; the second step with the oauth_query continues", async () => {
    const email = uniqueEmail("cont-2fa");
    const signedUp = await post(`${server.auth}/sign-up/email`, { name: "Two Factor", email, password: "password123" });
    await server.portcullis.app.orm.em.fork().getConnection().execute("update users set email_verified = ? where email = ?", [true, email]);
    const enabled = await post(`${server.auth}/two-factor/enable`, { password: "password123" }, { bearer: signedUp.body.token });
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    server.clock.advance(30 * SECOND);
    expect((await post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()) }, { bearer: signedUp.body.token })).status).toBe(200);

    const acct = account(email);
    const { query, verifier } = await signInPageQuery(trusted);
    const browser = new Browser();
    const { callback } = await socialRoundTrip(browser, acct.sub, { oauth_query: query, callbackURL: "/app" });
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/app?twoFactorRedirect=true`);
    expect(browser.value("portcullis.session_token")).toBeNull();
    expect(browser.value("portcullis.two_factor")).not.toBeNull();

    server.clock.advance(30 * SECOND);
    const done = await browser.post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()), oauth_query: query });
    expect(done.status, done.text).toBe(200);
    expect(done.body.redirect).toBe(true);
    const code = expectCodeAt(new URL(done.body.url));
    const { claims } = await redeem(trusted, code, verifier, browser);
    expect(claims.sub).toBe(signedUp.body.user.id);
  });
});
