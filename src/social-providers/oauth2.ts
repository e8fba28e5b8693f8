import { z } from "zod";
import { basicAuth, HttpError, request, type HttpClient } from "../http/client.ts";
import {
  rawProfileSchema,
  type AuthorizationRequest,
  type OAuthProvider,
  type ProviderProfile,
  type ProviderType,
  type ResponseIssuer,
  type TokenSet,
} from "./provider.ts";

/** The pieces every OAuth 2.0 provider shares (RFC 6749 §4.1 with RFC 7636 PKCE). */

export type ClientAuthMethod = "client_secret_basic" | "client_secret_post";

export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  tokenUrl: string;
  authMethod: ClientAuthMethod;
}

/** Parameters an operator's `authorizationParams` may not override: they carry the flow's security. */
const PROTECTED_PARAMS = new Set(["response_type", "client_id", "redirect_uri", "scope", "state", "code_challenge", "code_challenge_method", "nonce"]);

/** RFC 6749 §4.1.1 authorization request with RFC 7636 §4.3 S256 challenge. */
export function buildAuthorizationUrl(
  authUrl: string,
  clientId: string,
  request: AuthorizationRequest,
  extra: Record<string, string> = {},
): string {
  const url = new URL(authUrl);
  for (const [key, value] of Object.entries(extra)) if (!PROTECTED_PARAMS.has(key)) url.searchParams.set(key, value);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", clientId);
  url.searchParams.set("redirect_uri", request.redirectUri);
  if (request.scopes.length) url.searchParams.set("scope", request.scopes.join(" "));
  url.searchParams.set("state", request.state);
  url.searchParams.set("code_challenge", request.codeChallenge);
  url.searchParams.set("code_challenge_method", "S256"); // RFC 7636 §4.2: S256 only
  if (request.nonce) url.searchParams.set("nonce", request.nonce);
  return url.toString();
}

/** Seconds; some providers send numeric strings. */
const seconds = z.union([z.number().nonnegative(), z.string().regex(/^\d{1,10}$/).transform(Number)]);

/**
 * RFC 6749 §5.1 success or §5.2 error. GitHub answers errors with 200 and an `error` field, so
 * both shapes are read from any 2xx body.
 */
const tokenResponseSchema = z.object({
  access_token: z.string().min(1).max(8192).optional(),
  token_type: z.string().max(64).optional(),
  expires_in: seconds.optional(),
  refresh_token: z.string().min(1).max(8192).optional(),
  refresh_token_expires_in: seconds.optional(),
  scope: z.string().max(4096).optional(),
  id_token: z.string().min(1).max(16384).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().optional(),
});

export async function tokenRequest(http: HttpClient, client: ClientCredentials, params: Record<string, string>): Promise<TokenSet> {
  const form: Record<string, string> = { ...params };
  const headers: Record<string, string> = {};
  if (client.authMethod === "client_secret_basic") {
    headers.authorization = basicAuth(client.clientId, client.clientSecret); // RFC 6749 §2.3.1
  } else {
    form.client_id = client.clientId;
    form.client_secret = client.clientSecret;
  }
  const body = await request(http, { method: "POST", url: client.tokenUrl, headers, form, schema: tokenResponseSchema });
  const target = `POST ${new URL(client.tokenUrl).origin}${new URL(client.tokenUrl).pathname}`;
  if (body.error || !body.access_token) {
    const error = body.error ? { error: body.error.slice(0, 64), description: body.error_description?.slice(0, 200) } : { error: "no access_token" };
    throw new HttpError("status", target, 200, error);
  }
  // RFC 6750: only Bearer tokens are used here.
  if (body.token_type !== undefined && body.token_type.toLowerCase() !== "bearer") {
    throw new HttpError("invalid-body", target, 200, { error: "unsupported token_type" });
  }
  return {
    accessToken: body.access_token,
    refreshToken: body.refresh_token ?? null,
    idToken: body.id_token ?? null,
    expiresInSec: body.expires_in ?? null,
    refreshTokenExpiresInSec: body.refresh_token_expires_in ?? null,
    scope: body.scope || null,
  };
}

export function exchangeCode(http: HttpClient, client: ClientCredentials, input: { code: string; codeVerifier: string; redirectUri: string }) {
  return tokenRequest(http, client, {
    grant_type: "authorization_code",
    code: input.code,
    redirect_uri: input.redirectUri,
    code_verifier: input.codeVerifier, // RFC 7636 §4.5
  });
}

export function refreshTokens(http: HttpClient, client: ClientCredentials, refreshToken: string) {
  return tokenRequest(http, client, { grant_type: "refresh_token", refresh_token: refreshToken });
}

/** RFC 6750 §2.1: a GET with the access token in the Authorization header, never the query. */
export function getWithToken<T>(http: HttpClient, url: string, accessToken: string, schema: z.ZodType<T>, headers: Record<string, string> = {}) {
  return request(http, { method: "GET", url, headers: { ...headers, authorization: `Bearer ${accessToken}` }, schema });
}

export function getRawProfile(http: HttpClient, url: string, accessToken: string) {
  return getWithToken(http, url, accessToken, rawProfileSchema);
}

export interface ProviderSpec {
  name: string;
  type: ProviderType;
  defaultScopes: readonly string[];
  usesNonce: boolean;
  responseIssuer: ResponseIssuer | null;
  authUrl: string;
  authorizationParams?: Record<string, string> | undefined;
  http: HttpClient;
  client: ClientCredentials;
  /** The provider's own user-info call and mapping. */
  fetchProfile(accessToken: string): Promise<ProviderProfile>;
}

/** The OAuth 2.0 parts every provider shares; sign-in's user info defaults to a live profile fetch. */
export function oauth2Provider(spec: ProviderSpec): OAuthProvider {
  const { http, client, fetchProfile } = spec;
  return {
    name: spec.name,
    type: spec.type,
    defaultScopes: spec.defaultScopes,
    usesNonce: spec.usesNonce,
    responseIssuer: spec.responseIssuer,
    authorizationUrl: (request) => buildAuthorizationUrl(spec.authUrl, client.clientId, request, spec.authorizationParams),
    exchangeCode: (input) => exchangeCode(http, client, input),
    refresh: (refreshToken) => refreshTokens(http, client, refreshToken),
    userInfo: (tokens) => fetchProfile(tokens.accessToken),
    fetchProfile,
  };
}
