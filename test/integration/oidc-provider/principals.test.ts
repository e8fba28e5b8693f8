/**
 * Who may start a grant, and what an access token is worth at userinfo and introspection
 * (docs/oidc-provider.md "Security", docs/wire-contract.md §6): an API key is never a browser
 * that authorizes a client, and a token answers only while its row, its user and its bound
 * session are alive (the session store's one lookup, db/session-store/access-token.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OauthAccessToken, Session } from "../../../src/db/entities/index.ts";
import { post, request as http } from "../../harness/http.ts";
import { HOUR } from "../../harness/clock.ts";
import type { TestServer } from "../../harness/server.ts";
import { authorizeToCallback, authorizeUrl, browserPost, pkce, REDIRECT, signUp, startAuthorize, tokenRequest, userinfo, type Browser, serverWithClient, type RelyingParty } from "./helpers.ts";

let server: TestServer;
let rp: RelyingParty;
beforeAll(async () => ({ server, rp } = await serverWithClient()));
afterAll(() => server.close());

const request = (p = pkce()) =>
  authorizeUrl(server, {
    response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid email",
    state: "st4te", code_challenge: p.challenge, code_challenge_method: "S256",
  });

async function tokensFor(browser: Browser) {
  const p = pkce();
  const callback = await authorizeToCallback(server, browser, request(p));
  const code = callback.searchParams.get("code")!;
  const res = await tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: p.verifier, redirect_uri: REDIRECT }, rp);
  expect(res.status).toBe(200);
  return res.body as { access_token: string };
}

async function apiKeyOf(browser: Browser): Promise<string> {
  const res = await browserPost(browser, `${server.auth}/api-key/create`, {});
  expect(res.status, res.text).toBe(200);
  return res.body.key as string;
}

const introspect = (token: string) =>
  http("POST", `${server.auth}/oauth2/introspect`, {
    headers: { "content-type": "application/x-www-form-urlencoded", authorization: `Basic ${Buffer.from(`${rp.clientId}:${rp.clientSecret}`).toString("base64")}` },
    raw: new URLSearchParams({ token }).toString(),
  });

describe("an API key", () => {
  it("gets no code at the authorization endpoint, even for a client the user allowed", async () => {
    const user = await signUp(server);
    await tokensFor(user);
    const key = await apiKeyOf(user);
    const res = await fetch(request(), { redirect: "manual", headers: { "x-api-key": key } });
    expect(res.status).toBe(302);
    const back = new URL(res.headers.get("location")!);
    expect(back.searchParams.get("code")).toBeNull();
    expect(back.searchParams.get("error")).toBe("access_denied");
  });

  it("can neither consent nor continue a sign-in's authorization request", async () => {
    const user = await signUp(server);
    const key = await apiKeyOf(user);
    const consentPage = await startAuthorize(server, user, request());
    expect(consentPage.pathname).toMatch(/consent$/);
    const consent = await post(`${server.auth}/oauth2/consent`, { accept: true, oauth_query: consentPage.search.slice(1) }, { headers: { "x-api-key": key } });
    expect(consent.status).toBe(403);
    expect(consent.body.code).toBe("API_KEY_SESSION_NOT_ALLOWED");

    const signInPage = new URL((await fetch(request(), { redirect: "manual" })).headers.get("location")!, server.url);
    expect(signInPage.pathname).toMatch(/sign-in$/);
    const resumed = await post(`${server.auth}/oauth2/continue`, { postLogin: true, oauth_query: signInPage.search.slice(1) }, { headers: { "x-api-key": key } });
    expect(resumed.status).toBe(403);
    expect(resumed.body.code).toBe("API_KEY_SESSION_NOT_ALLOWED");
  });
});

describe("an access token at userinfo and introspection", () => {
  it("dies with its bound session's expiry, not only its removal", async () => {
    const user = await signUp(server);
    const { access_token } = await tokensFor(user);
    expect((await userinfo(server, access_token)).body.email).toBe(user.email);
    const em = server.portcullis.app.orm.em.fork();
    await em.nativeUpdate(Session, { user: user.userId }, { expiresAt: new Date(server.clock.now().getTime() - 1000) });
    expect((await userinfo(server, access_token)).status).toBe(401);
    expect((await introspect(access_token)).body).toEqual({ active: false });
  });

  it("dies at its own expiry and when revoked", async () => {
    const expiring = await tokensFor(await signUp(server));
    const revoked = await tokensFor(await signUp(server));
    expect((await introspect(revoked.access_token)).body.active).toBe(true);
    await post(`${server.auth}/oauth2/revoke`, { token: revoked.access_token, client_id: rp.clientId, client_secret: rp.clientSecret });
    expect((await userinfo(server, revoked.access_token)).status).toBe(401);
    expect((await introspect(revoked.access_token)).body).toEqual({ active: false });
    server.clock.advance(2 * HOUR);
    expect((await userinfo(server, expiring.access_token)).status).toBe(401);
    expect((await introspect(expiring.access_token)).body).toEqual({ active: false });
  });

  it("of a client (client credentials) is active to that client but names no user at userinfo", async () => {
    const res = await tokenRequest(server, { grant_type: "client_credentials" }, rp);
    expect(res.status).toBe(200);
    const reply = await userinfo(server, res.body.access_token);
    expect(reply.status).toBe(401);
    expect(reply.body.error).toBe("invalid_token");
    expect((await introspect(res.body.access_token)).body).toMatchObject({ active: true, sub: rp.clientId, client_id: rp.clientId });
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(OauthAccessToken, { clientId: rp.clientId, user: null })).toBeGreaterThan(0);
  });
});
