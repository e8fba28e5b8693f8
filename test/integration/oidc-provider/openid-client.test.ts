/**
 * A real relying party: openid-client 6 against the service over HTTP on loopback (discovery,
 * code + PKCE + state + nonce with RFC 9207 `iss`, the ID token, userinfo, refresh with
 * rotation, introspection, revocation, client credentials, the end-session URL).
 */
import * as jose from "jose";
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeToCallback, browserGet, browserPost, REDIRECT, registerClient, signUp } from "./helpers.ts";

let server: TestServer;
let config: oidc.Configuration;
let clientId: string;

beforeAll(async () => {
  server = await startTestServer({ deviceAuthorization: { intervalSec: 1 } }, { ownOrigin: true });
  const client = await registerClient(server);
  clientId = client.clientId;
  config = await oidc.discovery(new URL(server.auth), client.clientId, client.clientSecret!, undefined, { execute: [oidc.allowInsecureRequests] });
});
afterAll(async () => {
  await server.close();
});

async function signInThroughRp(scope = "openid profile email offline_access") {
  const browser = await signUp(server);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: REDIRECT,
    scope,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: "S256",
    state,
    nonce,
  });
  const callback = await authorizeToCallback(server, browser, url.toString());
  const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: state, expectedNonce: nonce, idTokenExpected: true });
  return { browser, tokens, callback };
}

describe("openid-client 6 as the relying party", () => {
  it("discovers exactly what is implemented", () => {
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(server.auth);
    expect(meta.response_types_supported).toEqual(["code"]);
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
    expect(meta.authorization_response_iss_parameter_supported).toBe(true);
    expect(meta.jwks_uri).toBe(`${server.auth}/jwks`);
    // OpenID Discovery §3: RS256 whatever jwt.alg (EdDSA here, the default) the service's own JWTs use.
    expect(meta.id_token_signing_alg_values_supported).toEqual(["RS256"]);
  });

  it("signs ID tokens with RS256 (the default) and the service's own JWTs with jwt.alg; a client may only register the one", async () => {
    const { browser, tokens } = await signInThroughRp();
    expect(jose.decodeProtectedHeader(tokens.id_token!).alg).toBe("RS256");
    const own = await get(`${server.auth}/token`, { headers: { cookie: browser.cookie } });
    expect(jose.decodeProtectedHeader(own.body.token).alg).toBe("EdDSA");
    const jwks = jose.createLocalJWKSet((await get(`${server.auth}/jwks`)).body);
    await expect(jose.jwtVerify(tokens.id_token!, jwks, { issuer: server.auth, audience: clientId, algorithms: ["RS256"] })).resolves.toBeDefined();
    await expect(jose.jwtVerify(own.body.token, jwks, { algorithms: ["EdDSA"] })).resolves.toBeDefined();
    const register = (alg: string) => post(`${server.auth}/oauth2/register`, { redirect_uris: [REDIRECT], id_token_signed_response_alg: alg });
    expect((await register("RS256")).status).toBe(201);
    for (const alg of ["EdDSA", "HS256", "none"]) {
      const refused = await register(alg);
      expect(refused.status).toBe(400);
      expect(refused.body.error).toBe("invalid_client_metadata");
    }
  });

  it("signs a user in with code + PKCE + state + nonce, and the ID token carries the session's claims", async () => {
    const { browser, tokens, callback } = await signInThroughRp();
    expect(callback.searchParams.get("iss")).toBe(server.auth);
    const claims = tokens.claims()!;
    expect(claims).toMatchObject({ iss: server.auth, sub: browser.userId, aud: clientId, email: browser.email, email_verified: false, name: "Ada Lovelace" });
    expect(claims.auth_time).toEqual(expect.any(Number));
    expect(claims.sid).toEqual(expect.any(String));
    expect(claims.at_hash).toEqual(expect.any(String));
    expect(tokens.refresh_token).toEqual(expect.any(String));
    const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
    expect(info).toMatchObject({ sub: browser.userId, email: browser.email, name: "Ada Lovelace" });
  });

  it("refreshes (rotating the refresh token), introspects and revokes", async () => {
    const { tokens } = await signInThroughRp();
    const refreshed = await oidc.refreshTokenGrant(config, tokens.refresh_token!);
    expect(refreshed.refresh_token).not.toBe(tokens.refresh_token);
    expect(refreshed.id_token).toEqual(expect.any(String));
    const active = await oidc.tokenIntrospection(config, refreshed.access_token);
    expect(active).toMatchObject({ active: true, client_id: clientId, token_type: "Bearer" });
    await oidc.tokenRevocation(config, refreshed.refresh_token!);
    expect((await oidc.tokenIntrospection(config, refreshed.access_token)).active).toBe(false);
    await expect(oidc.refreshTokenGrant(config, refreshed.refresh_token!)).rejects.toMatchObject({ error: "invalid_grant" });
  });

  it("gets a token for the client itself (client credentials): no ID token, no refresh token", async () => {
    const tokens = await oidc.clientCredentialsGrant(config, { scope: "profile" });
    expect(tokens.id_token).toBeUndefined();
    expect(tokens.refresh_token).toBeUndefined();
    expect(await oidc.tokenIntrospection(config, tokens.access_token)).toMatchObject({ active: true, sub: clientId, scope: "profile" });
  });

  it("ends the session through the end-session URL and returns to the registered URI with state", async () => {
    const { browser, tokens } = await signInThroughRp();
    const url = oidc.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: "https://rp.example.test/logged-out", state: "bye" });
    const res = await browserGet(browser, url.toString());
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe("https://rp.example.test/logged-out?state=bye");
    const session = await browserGet(browser, `${server.auth}/get-session`);
    expect(session.body).toBeNull();
    // The access token was bound to that session.
    expect((await oidc.tokenIntrospection(config, tokens.access_token)).active).toBe(false);
  });

  it("signs a device in through the device grant (RFC 8628) and gets the provider's tokens", async () => {
    const device = await registerClient(server, { authMethod: "none", grantTypes: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"] });
    const deviceConfig = await oidc.discovery(new URL(server.auth), device.clientId, undefined, oidc.None(), { execute: [oidc.allowInsecureRequests] });
    expect(deviceConfig.serverMetadata().device_authorization_endpoint).toBe(`${server.auth}/device/code`);
    const started = await oidc.initiateDeviceAuthorization(deviceConfig, { scope: "openid email offline_access" });
    const browser = await signUp(server);
    expect((await browserGet(browser, `${server.auth}/device?user_code=${started.user_code}`)).status).toBe(200);
    expect((await browserPost(browser, `${server.auth}/device/approve`, { userCode: started.user_code })).status).toBe(200);
    const tokens = await oidc.pollDeviceAuthorizationGrant(deviceConfig, started);
    expect(tokens.claims()).toMatchObject({ sub: browser.userId, aud: device.clientId, email: browser.email });
    expect(tokens.refresh_token).toEqual(expect.any(String));
    expect(await oidc.fetchUserInfo(deviceConfig, tokens.access_token, browser.userId)).toMatchObject({ email: browser.email });
  });
});
