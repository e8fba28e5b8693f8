/**
 * The OpenID Foundation conformance suite's steps (github.com/openid-certification/conformance-suite,
 * AbstractOIDCCServerTest and its conditions), done as black-box HTTP: the authorization request it
 * builds, the callback checks, the token endpoint checks and PerformStandardIdTokenChecks. The
 * suite's basic plan runs without PKCE: CERTIFICATION_CONFIG is the configuration a
 * certification run uses (docs/oidc-provider.md "Conformance"). Everything else is the default,
 * `jwt.alg` EdDSA included: ID tokens are RS256 whatever the service's own JWTs use.
 */
import { createHash, randomBytes } from "node:crypto";
import * as jose from "jose";
import { expect } from "vitest";
import type { PortcullisConfig } from "../../../src/index.ts";
import { cookieFrom, get, post, request, type Reply } from "../../harness/http.ts";
import type { TestServer } from "../../harness/server.ts";
import { browserGet, browserPost, consent, REDIRECT, type Browser } from "./helpers.ts";

export const CERTIFICATION_CONFIG: PortcullisConfig = { oidcProvider: { requirePkce: false } };

export interface Rp {
  clientId: string;
  clientSecret: string;
  /** How the client authenticates at the token endpoint (the suite's ClientAuthType variant). */
  auth: "client_secret_basic" | "client_secret_post";
}

/** RFC 6749 §5.2 / §4.1.2.1: error_description is %x20-21 / %x23-5B / %x5D-7E (ValidateErrorDescription...). */
export const ERROR_DESCRIPTION = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** CreateRandomStateValue / CreateRandomNonceValue. */
export const random = (bytes = 16) => randomBytes(bytes).toString("base64url");

export interface AuthRequest {
  url: string;
  state: string;
  nonce: string | undefined;
  params: Record<string, string>;
}

/**
 * CreateAuthorizationRequestSteps: client_id, redirect_uri, scope openid, state, nonce,
 * response_type code; `extra` on top, `omit` left out (the tests that miss one out).
 */
export function authRequest(server: TestServer, rp: Pick<Rp, "clientId">, extra: Record<string, string> = {}, omit: string[] = []): AuthRequest {
  const params: Record<string, string> = { client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid", state: random(), nonce: random(), response_type: "code", ...extra };
  for (const k of omit) delete params[k];
  const url = new URL(`${server.auth}/oauth2/authorize`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return { url: url.toString(), state: params.state!, nonce: params.nonce, params };
}

/** The browser follows the authorization request to the client's redirect URI, allowing the consent page on its way. */
export async function toCallback(server: TestServer, browser: Browser, url: string): Promise<URL> {
  const res = await browserGet(browser, url);
  expect(res.status, res.text).toBe(302);
  let next = new URL(res.headers.get("location")!, server.url);
  if (next.pathname === "/consent") next = await consent(server, browser, next);
  return next;
}

/** A signed-out browser: sign-in page, sign in (a new session), back through /oauth2/continue, consent if asked. */
export async function toCallbackThroughSignIn(server: TestServer, browser: Browser, url: string, password = "password123"): Promise<{ callback: URL; browser: Browser }> {
  const res = await browserGet(browser, url);
  expect(res.status, res.text).toBe(302);
  const signInPage = new URL(res.headers.get("location")!, server.url);
  expect(signInPage.pathname).toBe("/sign-in");
  const signedIn = await post(`${server.auth}/sign-in/email`, { email: browser.email, password });
  expect(signedIn.status, signedIn.text).toBe(200);
  const fresh = { ...browser, cookie: cookieFrom(signedIn.headers)! };
  const cont = await browserPost(fresh, `${server.auth}/oauth2/continue`, { oauth_query: signInPage.search.slice(1), postLogin: true });
  expect(cont.status, cont.text).toBe(200);
  let next = new URL(cont.body.url);
  if (next.pathname === "/consent") next = await consent(server, fresh, next);
  return { callback: next, browser: fresh };
}

/**
 * onAuthorizationCallbackResponse: the registered redirect URI (CheckMatchingCallbackParameters),
 * RFC 9207 `iss` (ValidateIssIfPresentInAuthorizationResponse), no error, the same `state`, a code
 * of at least 128 bits (EnsureMinimumAuthorizationCodeLength).
 */
export function codeFrom(server: TestServer, callback: URL, state: string): string {
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);
  expect(callback.searchParams.get("error"), callback.searchParams.get("error_description") ?? "").toBeNull();
  expect(callback.searchParams.get("iss")).toBe(server.auth);
  expect(callback.searchParams.get("state")).toBe(state);
  const code = callback.searchParams.get("code")!;
  expect(Buffer.byteLength(code) * 8).toBeGreaterThanOrEqual(128);
  return code;
}

/**
 * performGenericAuthorizationEndpointErrorResponseValidation: back at the redirect URI with
 * `error`, the same `state`, `iss`, no code, only the parameters OIDC Core §3.1.2.6 names, and a
 * description in RFC 6749's character set. Answers the error.
 */
export function authorizationError(server: TestServer, callback: URL, state: string | undefined): string {
  expect(`${callback.origin}${callback.pathname}`).toBe(REDIRECT);
  if (state !== undefined) expect(callback.searchParams.get("state")).toBe(state);
  expect(callback.searchParams.get("iss")).toBe(server.auth);
  expect(callback.searchParams.get("code")).toBeNull();
  for (const key of callback.searchParams.keys()) expect(["error", "error_description", "error_uri", "state", "session_state", "iss"]).toContain(key);
  expect(callback.searchParams.get("error_description") ?? "").toMatch(ERROR_DESCRIPTION);
  return callback.searchParams.get("error")!;
}

/** The token endpoint with the client's authentication (AddBasicAuthClientSecretToRequest or AddFormBasedClientSecretToRequest). */
export function tokenEndpoint(server: TestServer, rp: Rp, form: Record<string, string>): Promise<Reply> {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  const body = { ...form };
  if (rp.auth === "client_secret_basic") {
    headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(rp.clientId)}:${encodeURIComponent(rp.clientSecret)}`).toString("base64")}`;
  } else {
    Object.assign(body, { client_id: rp.clientId, client_secret: rp.clientSecret });
  }
  return request("POST", `${server.auth}/oauth2/token`, { headers, raw: new URLSearchParams(body).toString() });
}

export interface Tokens {
  access_token: string;
  token_type: string;
  expires_in: number;
  id_token: string;
  refresh_token?: string;
  scope: string;
}

/** requestAuthorizationCode (+ the refresh steps' header checks): 200 JSON, not cached, a Bearer token with expires_in and an ID token. */
export function expectTokenResponse(res: Reply): Tokens {
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.headers.get("cache-control")).toMatch(/no-store/);
  const body = res.body as Tokens;
  expect(body.access_token).toEqual(expect.any(String));
  expect(body.token_type.toLowerCase()).toBe("bearer");
  expect(Number.isInteger(body.expires_in) && body.expires_in > 0).toBe(true);
  expect(body.id_token).toEqual(expect.any(String));
  return body;
}

/** The code at the token endpoint (CreateTokenEndpointRequestForAuthorizationCodeGrant). */
export async function exchange(server: TestServer, rp: Rp, code: string, extra: Record<string, string> = {}): Promise<Tokens> {
  return expectTokenResponse(await tokenEndpoint(server, rp, { grant_type: "authorization_code", code, redirect_uri: REDIRECT, ...extra }));
}

/** CheckTokenEndpointHttpStatus400 + JSON + CheckErrorFromTokenEndpointResponseErrorInvalidGrant + a valid description. */
export function expectInvalidGrant(res: Reply): void {
  expect(res.status, res.text).toBe(400);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.body.error).toBe("invalid_grant");
  expect(res.body.error_description ?? "").toMatch(ERROR_DESCRIPTION);
}

export type IdTokenClaims = jose.JWTPayload & { sub: string; auth_time?: number; nonce?: string; at_hash?: string; azp?: string; acr?: string };

/** The claims an ID token may carry unasked (EnsureIdTokenDoesNotContainNonRequestedClaims), plus what the scopes release. */
const ID_TOKEN_CLAIMS = ["iss", "sub", "aud", "exp", "iat", "auth_time", "nonce", "acr", "amr", "azp", "at_hash", "c_hash", "nbf", "jti", "sid"];
export const SCOPE_CLAIMS: Record<string, string[]> = {
  profile: ["name", "family_name", "given_name", "middle_name", "nickname", "preferred_username", "profile", "picture", "website", "gender", "birthdate", "zoneinfo", "locale", "updated_at"],
  email: ["email", "email_verified"],
  address: ["address"],
  phone: ["phone_number", "phone_number_verified"],
};

/**
 * PerformStandardIdTokenChecks with OIDCCServerTest's and OIDCCIdTokenSignature's extras: a `kid`
 * (EnsureIdTokenContainsKid), RS256 (the default of OIDC Registration §2), the signature against
 * the published keys, iss / aud / azp / exp / iat / sub (ValidateIdToken, OIDC Core §3.1.3.7), the
 * nonce sent, `at_hash` right when present, updated_at a number, no claim the request did not ask for.
 */
export async function verifyIdToken(server: TestServer, idToken: string, opts: { clientId: string; nonce?: string | undefined; accessToken?: string; scopes?: string[] }): Promise<IdTokenClaims> {
  const header = jose.decodeProtectedHeader(idToken);
  expect(header.kid).toEqual(expect.any(String));
  expect(header.alg).toBe("RS256");
  const meta = (await get(`${server.auth}/.well-known/openid-configuration`)).body;
  const jwks = jose.createLocalJWKSet((await get(meta.jwks_uri)).body);
  const now = server.clock.now();
  const { payload } = await jose.jwtVerify(idToken, jwks, { issuer: meta.issuer, audience: opts.clientId, algorithms: ["RS256"], currentDate: now });
  const claims = payload as IdTokenClaims;
  if (Array.isArray(claims.aud) && claims.aud.length > 1) expect(claims.azp).toBe(opts.clientId);
  if (claims.azp !== undefined) expect(claims.azp).toBe(opts.clientId);
  expect(typeof claims.sub === "string" && claims.sub.length > 0 && claims.sub.length <= 255).toBe(true);
  expect(claims.iat! * 1000).toBeLessThanOrEqual(now.getTime() + 5 * 60 * 1000);
  expect(claims.exp! * 1000).toBeGreaterThan(now.getTime());
  if (opts.nonce !== undefined) expect(claims.nonce).toBe(opts.nonce);
  else expect(claims.nonce).toBeUndefined();
  if (claims.auth_time !== undefined) expect(Number.isInteger(claims.auth_time)).toBe(true);
  if (claims.updated_at !== undefined) expect(typeof claims.updated_at).toBe("number");
  if (claims.at_hash !== undefined && opts.accessToken !== undefined) {
    const digest = createHash("sha256").update(opts.accessToken, "ascii").digest();
    expect(claims.at_hash).toBe(digest.subarray(0, 16).toString("base64url"));
  }
  const allowed = new Set([...ID_TOKEN_CLAIMS, ...(opts.scopes ?? ["openid"]).flatMap((s) => SCOPE_CLAIMS[s] ?? [])]);
  for (const name of Object.keys(claims)) expect(allowed, `unrequested claim ${name}`).toContain(name);
  return claims;
}

/**
 * AbstractOIDCCUserInfoTest: 200 JSON with `sub`, the ID token's sub (VerifyUserInfoAndIdTokenInTokenEndpointSameSub),
 * standard claims of their standard types (ValidateUserInfoStandardClaims), updated_at a number.
 */
export function expectUserInfo(res: Reply, sub: string): Record<string, unknown> {
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  const info = res.body as Record<string, unknown>;
  expect(info.sub).toBe(sub);
  for (const c of ["name", "preferred_username", "picture", "email"]) if (info[c] !== undefined) expect(typeof info[c]).toBe("string");
  if (info.email_verified !== undefined) expect(typeof info.email_verified).toBe("boolean");
  if (info.updated_at !== undefined) expect(Number.isInteger(info.updated_at)).toBe(true);
  return info;
}

export interface Flow {
  request: AuthRequest;
  callback: URL;
  code: string;
  tokens: Tokens;
  claims: IdTokenClaims;
}

/** AbstractOIDCCServerTest's happy path: authorization request, callback, token endpoint, ID token checks. */
export async function happyFlow(server: TestServer, rp: Rp, browser: Browser, extra: Record<string, string> = {}, omit: string[] = []): Promise<Flow> {
  const req = authRequest(server, rp, extra, omit);
  const callback = await toCallback(server, browser, req.url);
  return finishFlow(server, rp, req, callback);
}

/** From the callback on: the code, the token endpoint, the ID token checks. */
export async function finishFlow(server: TestServer, rp: Rp, req: AuthRequest, callback: URL, tokenExtra: Record<string, string> = {}): Promise<Flow> {
  const code = codeFrom(server, callback, req.state);
  const tokens = await exchange(server, rp, code, tokenExtra);
  const scopes = (req.params.scope ?? "").split(" ");
  const claims = await verifyIdToken(server, tokens.id_token, { clientId: rp.clientId, nonce: req.nonce, accessToken: tokens.access_token, scopes });
  return { request: req, callback, code, tokens, claims };
}

/** GET userinfo with the bearer header (CallUserInfoEndpoint). */
export const userinfoGet = (server: TestServer, accessToken: string) => get(`${server.auth}/oauth2/userinfo`, { bearer: accessToken });

/** The metadata as the suite reads it (GetDynamicServerConfiguration). */
export const discovery = async (server: TestServer) => (await get(`${server.auth}/.well-known/openid-configuration`)).body as Record<string, unknown>;
