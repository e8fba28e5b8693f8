/**
 * The OpenID Foundation's Basic OP certification plan (oidcc-basic-certification-test-plan,
 * OIDCCBasicTestPlan in github.com/openid-certification/conformance-suite), one test per module,
 * named after it, asserting what the module asserts, over HTTP. Variants as the plan runs them:
 * response_type code, client_secret_basic (client_secret_post for its own module), default
 * response mode, a static client (the modules only applicable to dynamic registration register
 * one). Where the suite accepts either of two outcomes, the test pins the one Portcullis gives.
 * Known suite warnings (not failures) are listed in docs/oidc-provider.md "Conformance".
 */
import * as jose from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECOND } from "../../harness/clock.ts";
import { post, request } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import {
  authorizationError, authRequest, CERTIFICATION_CONFIG, discovery, expectInvalidGrant, expectTokenResponse, expectUserInfo, finishFlow,
  happyFlow, random, toCallback, toCallbackThroughSignIn, tokenEndpoint, userinfoGet, verifyIdToken, type Flow, type Rp,
} from "./conformance.ts";
import { browserGet, consent, pkce, REDIRECT, registerClient, signUp, type Browser } from "./helpers.ts";

let server: TestServer;
let rp: Rp;

beforeAll(async () => {
  server = await startTestServer(CERTIFICATION_CONFIG, { ownOrigin: true });
  rp = { ...((await registerClient(server)) as { clientId: string; clientSecret: string }), auth: "client_secret_basic" };
});
afterAll(async () => {
  await server.close();
});

const signedOut = (browser: Browser): Browser => ({ ...browser, cookie: "" });

/** An unsigned request object (SerializeRequestObjectWithNullAlgorithm). */
function unsignedJwt(claims: Record<string, unknown>): string {
  const part = (v: unknown) => Buffer.from(JSON.stringify(v)).toString("base64url");
  return `${part({ alg: "none" })}.${part(claims)}.`;
}

/** BuildRequestObjectByValue/ReferenceRedirectToAuthorizationEndpoint: the object, plus the duplicates OAuth requires outside it. */
function requestObjectUrl(name: "request" | "request_uri", value: string, outside: Record<string, string>): string {
  const url = new URL(`${server.auth}/oauth2/authorize`);
  url.searchParams.set(name, value);
  for (const [k, v] of Object.entries(outside)) url.searchParams.set(k, v);
  return url.toString();
}

/** The authorization server showed an error itself: no redirect to the client (the suite's placeholder for a screenshot). */
async function expectErrorShown(browser: Browser, url: string, ...notTo: string[]) {
  const res = await browserGet(browser, url);
  const location = res.headers.get("location");
  if (res.status === 302) {
    const next = new URL(location!, server.url);
    expect(next.origin).toBe(new URL(server.url).origin);
    for (const uri of notTo) expect(next.toString().startsWith(uri)).toBe(false);
  } else {
    expect(res.status).toBeGreaterThanOrEqual(400);
  }
}

/**
 * AbstractOIDCCSameAuthTwiceServerTest: a first authorization, then a second one that must come
 * straight back with a code (no page in between), with the same sub and auth_time.
 */
async function sameAuthTwice(firstExtra: Record<string, string>, secondExtra: (first: Flow) => Record<string, string>) {
  const browser = await signUp(server);
  const first = await happyFlow(server, rp, browser, firstExtra);
  const req = authRequest(server, rp, secondExtra(first));
  const res = await browserGet(browser, req.url);
  const second = await finishFlow(server, rp, req, new URL(res.headers.get("location")!));
  // CheckIdTokenAuthTimeClaimsSameIfPresent, CheckIdTokenSubConsistentForSecondAuthorization
  expect(second.claims.auth_time).toBe(first.claims.auth_time);
  expect(second.claims.sub).toBe(first.claims.sub);
  return { first, second };
}

describe("oidcc-basic-certification-test-plan", () => {
  it("oidcc-server", async () => {
    const browser = await signUp(server);
    expect((await discovery(server)).token_endpoint_auth_methods_supported).toContain("client_secret_basic");
    const flow = await happyFlow(server, rp, browser);
    // OP-IDToken-at_hash: optional from the token endpoint, right when present.
    expect(flow.claims.at_hash).toEqual(expect.any(String));
    // EnsureIdTokenDoesNotContainName: scope openid alone releases no profile claim.
    expect(flow.claims.name).toBeUndefined();
    expect(flow.claims.sub).toBe(browser.userId);
    expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub);
  });

  it("oidcc-response-type-missing", async () => {
    const req = authRequest(server, rp, {}, ["response_type"]);
    const callback = await toCallback(server, await signUp(server), req.url);
    expect(["unsupported_response_type", "invalid_request"]).toContain(authorizationError(server, callback, req.state));
  });

  it("oidcc-idtoken-signature", async () => {
    // Dynamic registration only: a client that names no id_token_signed_response_alg gets RS256 (OIDC Registration §2).
    const registered = await post(`${server.auth}/oauth2/register`, { redirect_uris: [REDIRECT], client_name: "oidcc-idtoken-signature", grant_types: ["authorization_code"] });
    expect(registered.status, registered.text).toBe(201);
    const dynamic: Rp = { clientId: registered.body.client_id, clientSecret: registered.body.client_secret, auth: "client_secret_basic" };
    const flow = await happyFlow(server, dynamic, await signUp(server));
    expect(flow.claims.aud).toBe(dynamic.clientId);
  });

  it("oidcc-idtoken-unsigned", async () => {
    // The suite skips it when discovery does not offer "none" (servers need not support it): Portcullis never signs with none.
    const meta = await discovery(server);
    expect(meta.id_token_signing_alg_values_supported).not.toContain("none");
    // A client asking for unsigned ID tokens is refused at registration (OpenID Registration §2:
    // only the provider's one ID-token algorithm), so no unsigned token is ever minted.
    const registered = await post(`${server.auth}/oauth2/register`, { redirect_uris: [REDIRECT], id_token_signed_response_alg: "none" });
    expect(registered.status, registered.text).toBe(400);
    expect(registered.body.error).toBe("invalid_client_metadata");
    const flow = await happyFlow(server, rp, await signUp(server));
    expect(jose.decodeProtectedHeader(flow.tokens.id_token).alg).toBe("RS256");
    expect(flow.tokens.id_token.split(".")[2]).not.toBe("");
  });

  it("oidcc-userinfo-get", async () => {
    const flow = await happyFlow(server, rp, await signUp(server));
    expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub);
  });

  it("oidcc-userinfo-post-header", async () => {
    const flow = await happyFlow(server, rp, await signUp(server));
    // SetResourceMethodToPost: the bearer header, an empty body (with or without a form content type).
    const bare = await request("POST", `${server.auth}/oauth2/userinfo`, { bearer: flow.tokens.access_token });
    expectUserInfo(bare, flow.claims.sub);
    const form = await request("POST", `${server.auth}/oauth2/userinfo`, { bearer: flow.tokens.access_token, headers: { "content-type": "application/x-www-form-urlencoded" }, raw: "" });
    expectUserInfo(form, flow.claims.sub);
  });

  it("oidcc-userinfo-post-body", async () => {
    const flow = await happyFlow(server, rp, await signUp(server));
    const res = await request("POST", `${server.auth}/oauth2/userinfo`, {
      headers: { "content-type": "application/x-www-form-urlencoded" },
      raw: new URLSearchParams({ access_token: flow.tokens.access_token }).toString(),
    });
    // Optional in the standards; Portcullis supports it (RFC 6750 §2.2).
    expectUserInfo(res, flow.claims.sub);
  });

  it("oidcc-ensure-request-without-nonce-succeeds-for-code-flow", async () => {
    const req = authRequest(server, rp, {}, ["nonce"]);
    const callback = await toCallback(server, await signUp(server), req.url);
    const flow = await finishFlow(server, rp, req, callback);
    expect(flow.claims.nonce).toBeUndefined();
  });

  it("oidcc-scope-profile", async () => {
    expect((await discovery(server)).scopes_supported).toEqual(expect.arrayContaining(["openid", "profile"]));
    const flow = await happyFlow(server, rp, await signUp(server), { scope: "openid profile" });
    const info = expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub);
    // VerifyScopesReturnedInUserInfoClaims: the profile scope's claims come back.
    expect(info).toMatchObject({ name: "Ada Lovelace", updated_at: expect.any(Number) });
  });

  it("oidcc-scope-email", async () => {
    const browser = await signUp(server);
    const flow = await happyFlow(server, rp, browser, { scope: "openid email" });
    const info = expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub);
    expect(info).toMatchObject({ email: browser.email, email_verified: false });
    expect(info.name).toBeUndefined();
    expect(flow.claims.name).toBeUndefined();
  });

  // The suite skips a scope test when scopes_supported lacks its scope; asking anyway is invalid_scope.
  for (const [module, scope] of [["oidcc-scope-address", "address"], ["oidcc-scope-phone", "phone"], ["oidcc-scope-all", "address email phone profile"]] as const) {
    it(module, async () => {
      const supported = (await discovery(server)).scopes_supported as string[];
      expect(scope.split(" ").every((s) => supported.includes(s))).toBe(false);
      const req = authRequest(server, rp, { scope: `openid ${scope}` });
      expect(authorizationError(server, await toCallback(server, await signUp(server), req.url), req.state)).toBe("invalid_scope");
    });
  }

  it("oidcc-alternate-happy-flow", async () => {
    const browser = await signUp(server);
    // ReverseScopeOrderInAuthorizationEndpointRequest and BuildPlainRedirectToAuthorizationEndpointReorderedParams.
    const req = authRequest(server, rp, { scope: "email openid" });
    const url = new URL(`${server.auth}/oauth2/authorize`);
    for (const k of Object.keys(req.params).sort().reverse()) url.searchParams.set(k, req.params[k]!);
    const flow = await finishFlow(server, rp, req, await toCallback(server, browser, url.toString()));
    expect(expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub).email).toBe(browser.email);
  });

  for (const display of ["page", "popup"]) {
    it(`oidcc-display-${display}`, async () => {
      await happyFlow(server, rp, await signUp(server), { display });
    });
  }

  it("oidcc-prompt-login", async () => {
    const browser = await signUp(server);
    const first = await happyFlow(server, rp, browser);
    server.clock.advance(SECOND);
    // The second request must ask the user to sign in again, although a session is there.
    const req = authRequest(server, rp, { prompt: "login" });
    const res = await browserGet(browser, req.url);
    expect(new URL(res.headers.get("location")!, server.url).pathname).toBe("/sign-in");
    const { callback } = await toCallbackThroughSignIn(server, browser, req.url);
    const second = await finishFlow(server, rp, req, callback);
    // CheckSecondIdTokenAuthTimeIsLaterIfPresent
    expect(second.claims.auth_time!).toBeGreaterThan(first.claims.auth_time!);
    expect(second.claims.sub).toBe(first.claims.sub);
  });

  it("oidcc-prompt-none-not-logged-in", async () => {
    const req = authRequest(server, rp, { prompt: "none", state: random(96) });
    expect(req.state.length).toBe(128);
    const res = await browserGet(signedOut(await signUp(server)), req.url);
    const callback = new URL(res.headers.get("location")!);
    // CheckErrorFromAuthorizationEndpointIsOneThatRequiredAUserInterface, with the long state unharmed.
    expect(["login_required", "interaction_required", "consent_required", "account_selection_required"]).toContain(authorizationError(server, callback, req.state));
  });

  it("oidcc-prompt-none-logged-in", async () => {
    await sameAuthTwice({}, () => ({ prompt: "none" }));
  });

  it("oidcc-max-age-1", async () => {
    const browser = await signUp(server);
    const first = await happyFlow(server, rp, browser);
    server.clock.advance(2 * SECOND);
    const req = authRequest(server, rp, { max_age: "1" });
    const res = await browserGet(browser, req.url);
    expect(new URL(res.headers.get("location")!, server.url).pathname).toBe("/sign-in");
    const { callback } = await toCallbackThroughSignIn(server, browser, req.url);
    const second = await finishFlow(server, rp, req, callback);
    // CheckIdTokenAuthTimeClaimPresentDueToMaxAge, ...IsLaterIfPresent, ...IsRecentIfPresent
    expect(second.claims.auth_time).toEqual(expect.any(Number));
    expect(second.claims.auth_time!).toBeGreaterThan(first.claims.auth_time!);
    expect(Math.abs(server.clock.now().getTime() / 1000 - second.claims.auth_time!)).toBeLessThan(5 * 60);
  });

  it("oidcc-max-age-10000", async () => {
    // max_age on both requests: auth_time must be there (CheckIdTokenAuthTimeClaimPresentDueToMaxAge).
    const { first } = await sameAuthTwice({ max_age: "15000" }, () => ({ max_age: "10000" }));
    expect(first.claims.auth_time).toEqual(expect.any(Number));
  });

  it("oidcc-ensure-request-with-unknown-parameter-succeeds", async () => {
    await happyFlow(server, rp, await signUp(server), { extra: "foobar" });
  });

  it("oidcc-id-token-hint", async () => {
    await sameAuthTwice({}, (first) => ({ prompt: "none", id_token_hint: first.tokens.id_token }));
  });

  it("oidcc-login-hint", async () => {
    const browser = await signUp(server);
    const req = authRequest(server, rp, { login_hint: `buffy@${new URL(server.url).hostname}` });
    const { callback } = await toCallbackThroughSignIn(server, signedOut(browser), req.url);
    expect((await finishFlow(server, rp, req, callback)).claims.sub).toBe(browser.userId);
  });

  it("oidcc-ui-locales", async () => {
    await happyFlow(server, rp, await signUp(server), { ui_locales: "se" });
  });

  it("oidcc-claims-locales", async () => {
    await happyFlow(server, rp, await signUp(server), { claims_locales: "se" });
  });

  it("oidcc-ensure-request-with-acr-values-succeeds", async () => {
    // No acr_values_supported in discovery: the suite sends "1 2". acr_values is a voluntary request (OIDC Core §3.1.2.1): it must succeed.
    await happyFlow(server, rp, await signUp(server), { acr_values: "1 2" });
  });

  it("oidcc-codereuse", async () => {
    const flow = await happyFlow(server, rp, await signUp(server));
    expectInvalidGrant(await tokenEndpoint(server, rp, { grant_type: "authorization_code", code: flow.code, redirect_uri: REDIRECT }));
  });

  it("oidcc-codereuse-30seconds", async () => {
    const flow = await happyFlow(server, rp, await signUp(server));
    server.clock.advance(30 * SECOND);
    expectInvalidGrant(await tokenEndpoint(server, rp, { grant_type: "authorization_code", code: flow.code, redirect_uri: REDIRECT }));
    // RFC 6749 §4.1.2: the tokens issued from the code are revoked.
    const after = await userinfoGet(server, flow.tokens.access_token);
    expect(after.status).toBeGreaterThanOrEqual(400);
    expect(after.status).toBeLessThan(500);
  });

  it("oidcc-ensure-registered-redirect-uri", async () => {
    const bad = `${REDIRECT}/${random(6)}`;
    await expectErrorShown(await signUp(server), authRequest(server, rp, { redirect_uri: bad }).url, bad, REDIRECT);
  });

  it("oidcc-ensure-post-request-succeeds", async () => {
    const browser = await signUp(server);
    const req = authRequest(server, rp);
    // OIDC Core §3.1.2.1: the authorization endpoint takes POST (a form the client's page submits) as it takes GET.
    const res = await request("POST", `${server.auth}/oauth2/authorize`, {
      headers: { cookie: browser.cookie, accept: "text/html", "content-type": "application/x-www-form-urlencoded", origin: "https://rp.example.test", "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" },
      raw: new URLSearchParams(req.params).toString(),
    });
    expect(res.status, res.text).toBe(302);
    let next = new URL(res.headers.get("location")!, server.url);
    if (next.pathname === "/consent") next = await consent(server, browser, next);
    await finishFlow(server, rp, req, next);
  });

  it("oidcc-server-client-secret-post", async () => {
    expect((await discovery(server)).token_endpoint_auth_methods_supported).toContain("client_secret_post");
    const registered = (await registerClient(server, { authMethod: "client_secret_post" })) as { clientId: string; clientSecret: string };
    const postRp: Rp = { ...registered, auth: "client_secret_post" };
    const flow = await happyFlow(server, postRp, await signUp(server));
    expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub);
  });

  it("oidcc-request-uri-unsigned-supported-correctly-or-rejected-as-unsupported", async () => {
    const req = authRequest(server, rp);
    const { client_id, response_type, scope, redirect_uri } = req.params;
    const url = requestObjectUrl("request_uri", "https://rp.example.test/request.jwt", { client_id: client_id!, response_type: response_type!, scope: scope!, redirect_uri: redirect_uri! });
    // Rejected as unsupported, at the client (the suite then skips the rest).
    expect(authorizationError(server, await toCallback(server, await signUp(server), url), undefined)).toBe("request_uri_not_supported");
    expect((await discovery(server)).request_uri_parameter_supported).toBe(false);
  });

  it("oidcc-unsigned-request-object-supported-correctly-or-rejected-as-unsupported", async () => {
    const req = authRequest(server, rp);
    const { client_id, response_type, scope, redirect_uri } = req.params;
    const url = requestObjectUrl("request", unsignedJwt(req.params), { client_id: client_id!, response_type: response_type!, scope: scope!, redirect_uri: redirect_uri! });
    expect(authorizationError(server, await toCallback(server, await signUp(server), url), undefined)).toBe("request_not_supported");
    expect((await discovery(server)).request_parameter_supported).toBe(false);
  });

  it("oidcc-claims-essential", async () => {
    const flow = await happyFlow(server, rp, await signUp(server), { claims: JSON.stringify({ userinfo: { name: { essential: true } } }) });
    const info = expectUserInfo(await userinfoGet(server, flow.tokens.access_token), flow.claims.sub);
    // EnsureUserInfoContainsName; EnsureIdTokenDoesNotContainName (asked for at userinfo only).
    expect(info.name).toBe("Ada Lovelace");
    expect(flow.claims.name).toBeUndefined();
  });

  it("oidcc-ensure-request-object-with-redirect-uri", async () => {
    const req = authRequest(server, rp);
    const invalid = `${REDIRECT}_invalid`;
    const { client_id, response_type, scope } = req.params;
    // The object names the registered URI, the query an unregistered one: an error page, never a redirect to either.
    const url = requestObjectUrl("request", unsignedJwt(req.params), { client_id: client_id!, response_type: response_type!, scope: scope!, redirect_uri: invalid });
    await expectErrorShown(await signUp(server), url, invalid, REDIRECT);
  });

  it("oidcc-refresh-token", async () => {
    const meta = await discovery(server);
    expect(meta.grant_types_supported).toContain("refresh_token");
    expect(meta.scopes_supported).toContain("offline_access");
    const second: Rp = { ...((await registerClient(server)) as { clientId: string; clientSecret: string }), auth: "client_secret_basic" };
    const refreshed: Record<string, string> = {};
    for (const client of [rp, second]) {
      const browser = await signUp(server);
      // AddPromptConsentToAuthorizationEndpointRequestIfScopeContainsOfflineAccess (OIDC Core §11).
      const req = authRequest(server, client, { scope: "openid offline_access", prompt: "consent" });
      const flow = await finishFlow(server, client, req, await toCallback(server, browser, req.url));
      const refreshToken = flow.tokens.refresh_token!;
      expect(refreshToken).toMatch(/^[\x20-\x7e]+$/); // RFC 6749 A.17
      server.clock.advance(SECOND);
      const res = expectTokenResponse(await tokenEndpoint(server, client, { grant_type: "refresh_token", refresh_token: refreshToken, scope: "openid offline_access" }));
      // OIDC Core §12.2: the same iss, sub, aud and auth_time; a later iat; no nonce.
      const claims = await verifyIdToken(server, res.id_token, { clientId: client.clientId, accessToken: res.access_token, scopes: ["openid", "offline_access"] });
      expect(claims).toMatchObject({ iss: flow.claims.iss, sub: flow.claims.sub, aud: flow.claims.aud, auth_time: flow.claims.auth_time });
      expect(claims.iat!).toBeGreaterThan(flow.claims.iat!);
      expectUserInfo(await userinfoGet(server, res.access_token), claims.sub);
      refreshed[client.clientId] = res.refresh_token!;
    }
    // The second client's refresh token is refused to the first.
    expectInvalidGrant(await tokenEndpoint(server, rp, { grant_type: "refresh_token", refresh_token: refreshed[second.clientId]!, scope: "openid offline_access" }));
  });

  it("oidcc-ensure-request-with-valid-pkce-succeeds", async () => {
    const p = pkce();
    const req = authRequest(server, rp, { code_challenge: p.challenge, code_challenge_method: "S256" });
    const callback = await toCallback(server, await signUp(server), req.url);
    await finishFlow(server, rp, req, callback, { code_verifier: p.verifier });
  });
});
