import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { OauthCode, OauthConsent } from "../../db/entities/index.ts";
import { OAuthError } from "../../errors.ts";
import { lastingAccessRefusal, type ResolvedSession } from "../../core/index.ts";
import { allowedScopes, findClient, type Client } from "./clients.ts";
import { consentPageUrl, issuerOf, loginPageUrl, parseScopes, PKCE_VALUE, redirectUriMatches, acceptableResource } from "./oidc-provider.rules.ts";
import { sessionDigest, signQuery } from "./signed-query.ts";
import { verifyIdTokenHint } from "./id-token-hint.ts";
import { acrRequest, chooseAcr, sessionAmr } from "./acr.ts";

/**
 * The authorization endpoint (RFC 6749 §4.1.1, OIDC Core §3.1.2). Until the client and its
 * redirect URI are known good, a failure is shown (thrown, never redirected: RFC 6749 §4.1.2.1);
 * after that it goes back to the client with `state` and `iss` (RFC 9207). Otherwise the
 * browser goes to the sign-in page, the consent page, or back with a single-use code.
 */

export interface AuthorizeContext {
  session: ResolvedSession | null;
  /** Set when the request comes back signed from our page: a session created after it satisfies prompt=login. */
  signedAt?: Date;
  /** The consent step just recorded the user's decision: prompt=consent is satisfied. */
  consented?: boolean;
}

export interface ValidRequest {
  client: Client;
  redirectUri: string;
  state: string | undefined;
  params: Record<string, string>;
}

const PROMPTS = new Set(["none", "login", "consent"]);

/** `url` with the RFC 6749 §4.1.2 response parameters and RFC 9207 `iss`. */
export function responseUrl(app: App, redirectUri: string, values: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries(values)) if (v !== undefined) url.searchParams.set(k, v);
  url.searchParams.set("iss", issuerOf(app.config));
  return url.toString();
}

export function errorUrl(app: App, request: Pick<ValidRequest, "redirectUri" | "state">, error: string, description: string): string {
  return responseUrl(app, request.redirectUri, { error, error_description: description, state: request.state });
}

/** The client and redirect URI: failures are shown, never redirected. */
export async function validateClientAndRedirect(app: App, em: EntityManager, params: Record<string, string>): Promise<ValidRequest> {
  const client = await findClient(em, params.client_id ?? "");
  if (!client) throw new OAuthError("INVALID_CLIENT", "Unknown client_id", "invalid_client");
  if (client.row.disabled) throw new OAuthError("CLIENT_DISABLED", "The client is disabled", "invalid_client");
  const redirectUri = params.redirect_uri;
  // OIDC Core §3.1.2.1: redirect_uri is required; one registered URI is never assumed.
  if (!redirectUri || !redirectUriMatches(client.redirectUris, redirectUri)) {
    throw new OAuthError("INVALID_REDIRECT_URI", "redirect_uri is not registered for this client", "invalid_request");
  }
  return { client, redirectUri, state: params.state, params };
}

class Redirect {
  constructor(readonly url: string) {}
}

function fail(app: App, req: ValidRequest, error: string, description: string): never {
  throw new Redirect(errorUrl(app, req, error, description));
}

/** The request's own rules, in RFC order; answers the scopes granted by the request. */
function checkRequest(app: App, req: ValidRequest): string[] {
  const p = req.params;
  if (p.request !== undefined) fail(app, req, "request_not_supported", "request objects are not supported");
  if (p.request_uri !== undefined) fail(app, req, "request_uri_not_supported", "request_uri is not supported");
  if (p.response_type !== "code") fail(app, req, "unsupported_response_type", "response_type must be code");
  if (!req.client.grantTypes.includes("authorization_code")) fail(app, req, "unauthorized_client", "the client may not use the authorization code grant");
  const scopes = parseScopes(p.scope);
  const allowed = allowedScopes(app, req.client);
  const unknown = scopes.filter((s) => !allowed.includes(s));
  if (unknown.length) fail(app, req, "invalid_scope", `invalid scopes: ${unknown.join(" ")}`);
  if (scopes.length === 0) fail(app, req, "invalid_scope", "scope is required");
  // RFC 7636 and RFC 9700 §2.1.1: S256 for everyone (a confidential client may go without when
  // `requirePkce` is off); plain and a missing method are refused.
  const pkceOptional = !app.config.oidcProvider.requirePkce && !req.client.isPublic;
  if (p.code_challenge || p.code_challenge_method || !pkceOptional) {
    if (!p.code_challenge) fail(app, req, "invalid_request", "code_challenge is required (PKCE, S256)");
    if (p.code_challenge_method !== "S256") fail(app, req, "invalid_request", "code_challenge_method must be S256");
    if (!PKCE_VALUE.test(p.code_challenge)) fail(app, req, "invalid_request", "code_challenge is malformed");
  }
  const prompts = parseScopes(p.prompt);
  if (prompts.some((x) => !PROMPTS.has(x))) fail(app, req, "invalid_request", "unsupported prompt value");
  if (prompts.includes("none") && prompts.length > 1) fail(app, req, "invalid_request", "prompt=none cannot be combined");
  if (p.max_age !== undefined && !/^\d{1,9}$/.test(p.max_age)) fail(app, req, "invalid_request", "max_age must be a non-negative integer");
  if (p.resource !== undefined && !acceptableResource(app, p.resource)) fail(app, req, "invalid_target", "resource is not accepted");
  if (p.nonce !== undefined && p.nonce.length > 512) fail(app, req, "invalid_request", "nonce is too long");
  if (p.claims !== undefined) {
    try {
      if (typeof JSON.parse(p.claims) !== "object") throw new Error();
    } catch {
      fail(app, req, "invalid_request", "claims must be a JSON object");
    }
  }
  return scopes;
}

/** The session was created after the request was handed to the sign-in page: the user signed in for it. */
function signedInForThis(auth: AuthorizeContext): boolean {
  return auth.signedAt !== undefined && auth.session !== null && auth.session.session.createdAt.getTime() >= auth.signedAt.getTime();
}

/** OIDC Core §3.1.2.2: a session of another user than the `id_token_hint` names is not the one asked for. */
function needsLogin(app: App, req: ValidRequest, auth: AuthorizeContext, hintedSub: string | null): boolean {
  const session = auth.session;
  if (!session) return true;
  if (hintedSub !== null && hintedSub !== session.user.id) return true;
  const prompts = parseScopes(req.params.prompt);
  const created = session.session.createdAt.getTime();
  if (prompts.includes("login") && !signedInForThis(auth)) return true;
  const maxAge = req.params.max_age;
  if (maxAge !== undefined && app.clock.now().getTime() - created > Number(maxAge) * 1000) return true;
  return false;
}

async function hasConsent(em: EntityManager, client: Client, userId: string, scopes: string[]): Promise<boolean> {
  const row = await em.findOne(OauthConsent, { clientId: client.clientId, user: userId }, { disableIdentityMap: true });
  if (!row) return false;
  const granted = JSON.parse(row.scopes) as string[];
  return scopes.every((s) => granted.includes(s));
}

async function issueCode(app: App, em: EntityManager, req: ValidRequest, session: ResolvedSession, scopes: string[], auth: { amr: string | null; acr: string | null }): Promise<string> {
  const code = randomToken(32);
  const now = app.clock.now();
  const p = req.params;
  await em.insert(OauthCode, {
    id: randomUUID(),
    codeHash: sha256(code),
    clientId: req.client.clientId,
    user: session.user.id as never,
    sessionId: session.session.id,
    redirectUri: req.redirectUri,
    // Empty: no PKCE (a confidential client, requirePkce off); the token request then must not send a verifier.
    codeChallenge: p.code_challenge ?? "",
    scopes: scopes.join(" "),
    nonce: p.nonce ?? null,
    resource: p.resource ?? null,
    claims: p.claims ?? null,
    amr: auth.amr,
    acr: auth.acr,
    authTime: session.session.createdAt,
    expiresAt: new Date(now.getTime() + app.config.oidcProvider.codeExpiresInSec * 1000),
    usedAt: null,
    createdAt: now,
  });
  return responseUrl(app, req.redirectUri, { code, state: req.state });
}

/** Where the browser goes next: the client (code or error), the sign-in page or the consent page. */
export async function authorize(app: App, em: EntityManager, params: Record<string, string>, auth: AuthorizeContext): Promise<string> {
  const req = await validateClientAndRedirect(app, em, params);
  try {
    const scopes = checkRequest(app, req);
    const prompts = parseScopes(req.params.prompt);
    // docs/wire-contract.md §6: an impersonation never grants a client lasting access.
    if (auth.session && lastingAccessRefusal(auth.session)) fail(app, req, "access_denied", "an impersonation session cannot authorize clients");
    let hintedSub: string | null = null;
    if (req.params.id_token_hint !== undefined) {
      const hint = await verifyIdTokenHint(app, req.params.id_token_hint);
      if (!hint || typeof hint.sub !== "string") fail(app, req, "invalid_request", "id_token_hint is not an ID token of this issuer");
      hintedSub = hint.sub as string;
    }
    if (needsLogin(app, req, auth, hintedSub)) {
      if (prompts.includes("none")) fail(app, req, "login_required", "the user is not signed in");
      return `${loginPageUrl(app.config)}?${signQuery(app, params)}`;
    }
    const session = auth.session!;
    const amr = await sessionAmr(em, session.session.id);
    const acr = chooseAcr(amr, acrRequest(req.params));
    if (acr === "unmet") {
      // OIDC Core §5.5.1.1: an essential acr not met fails the authentication. The user gets one
      // sign-in for this request (a two-factor user's reaches `mfa`); after it, the client hears so
      // (OpenID Connect Unmet Authentication Requirements 1.0).
      if (prompts.includes("none")) fail(app, req, "login_required", "the session does not meet the requested acr");
      if (!signedInForThis(auth)) return `${loginPageUrl(app.config)}?${signQuery(app, params)}`;
      fail(app, req, "unmet_authentication_requirements", "the sign-in did not meet the requested acr");
    }
    const consentNeeded =
      (prompts.includes("consent") && !auth.consented) || (!req.client.row.skipConsent && !(await hasConsent(em, req.client, session.user.id, scopes)));
    if (consentNeeded) {
      if (prompts.includes("none")) fail(app, req, "consent_required", "the user has not consented");
      return `${consentPageUrl(app.config)}?${signQuery(app, params, { sessionId: session.session.id })}`;
    }
    return await issueCode(app, em, req, session, scopes, { amr, acr });
  } catch (err) {
    if (err instanceof Redirect) return err.url;
    throw err;
  }
}

/** The consent step's binding: the request was shown to this very session. */
export function boundToSession(digest: string | null, sessionId: string): boolean {
  return digest !== null && digest === sessionDigest(sessionId);
}
