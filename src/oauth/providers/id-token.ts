import type { JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from "jose";

/** jose, loaded on the first ID token (issue 14 lever 2). */
let jose: typeof import("jose") | undefined;
const loadJose = async () => (jose ??= await import("jose"));
import { z } from "zod";
import type { Clock } from "../../config/schema.ts";
import { constantTimeEqual } from "../../crypto/tokens.ts";
import { HttpError, request, type HttpClient } from "../../http/client.ts";
import { ProfileError, toStandardUserInfo, type StandardUserInfo } from "./provider.ts";

/**
 * ID-token verification shared by the providers that have it (OpenID Connect Core §3.1.3.7):
 * signing keys from the provider's JWKS, found directly or through its discovery document.
 */

/**
 * Public-key algorithms only (RFC 8725 §3.1): `none` is never accepted, and an HMAC family would
 * let anyone holding the published public key forge a token (the "HS256 with the public key" attack).
 */
export const ASYMMETRIC_ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];

const JWKS_TTL_MS = 10 * 60 * 1000;
/** A token signed by an unknown key refetches the set, at most this often (key rotation). */
const JWKS_REFETCH_MIN_MS = 30 * 1000;
const DISCOVERY_TTL_MS = 60 * 60 * 1000;

const jwksSchema = z.object({ keys: z.array(z.looseObject({ kty: z.string() })).max(100) });
const discoverySchema = z.looseObject({ issuer: z.string().min(1).max(2048), jwks_uri: z.url({ protocol: /^https?$/ }) });

export type KeySource = (refresh: boolean) => Promise<JWTVerifyGetKey>;

/** The provider's JWKS, cached per instance; `refresh` re-reads it when a token names an unknown key. */
export function jwksCache(http: HttpClient, url: () => Promise<string>, clock: Clock): KeySource {
  let cached: { set: JWTVerifyGetKey; fetchedAtMs: number } | null = null;
  return async function keys(refresh) {
    const nowMs = clock.now().getTime();
    const age = cached ? nowMs - cached.fetchedAtMs : Infinity;
    if (!cached || age > JWKS_TTL_MS || (refresh && age > JWKS_REFETCH_MIN_MS)) {
      const jwks = await request(http, { method: "GET", url: await url(), schema: jwksSchema });
      cached = { set: (await loadJose()).createLocalJWKSet(jwks as JSONWebKeySet), fetchedAtMs: nowMs };
    }
    return cached.set;
  };
}

export interface Discovery {
  issuer: string;
  jwksUri: string;
}

const WELL_KNOWN = "/.well-known/openid-configuration";

/**
 * OpenID Connect Discovery 1.0 §4, cached an hour. §4.3: the `issuer` a document names must be
 * the URL it was fetched under (minus the well-known suffix), so a document served elsewhere
 * cannot claim another provider's identity.
 */
export function discoveryCache(http: HttpClient, url: string, clock: Clock): () => Promise<Discovery> {
  let cached: { value: Discovery; fetchedAtMs: number } | null = null;
  return async function discovery() {
    const nowMs = clock.now().getTime();
    if (cached && nowMs - cached.fetchedAtMs <= DISCOVERY_TTL_MS) return cached.value;
    const doc = await request(http, { method: "GET", url, schema: discoverySchema });
    if (url.endsWith(WELL_KNOWN) && doc.issuer.replace(/\/$/, "") !== url.slice(0, -WELL_KNOWN.length)) {
      const target = `GET ${new URL(url).origin}${new URL(url).pathname}`;
      throw new HttpError("invalid-body", target, 200, null, { cause: new Error("the issuer is not the discovery URL's prefix (OIDC Discovery §4.3)") });
    }
    cached = { value: { issuer: doc.issuer, jwksUri: doc.jwks_uri }, fetchedAtMs: nowMs };
    return cached.value;
  };
}

export interface IdTokenCheck {
  clientId: string;
  issuers: () => Promise<readonly string[]>;
  keys: KeySource;
  algorithms: string[];
  clock: Clock;
}

/**
 * OpenID Connect Core §3.1.3.7: signature with one of the provider's keys (items 6-8), `iss`
 * (item 2), `aud` holding our client id and `azp` when there are several audiences (items 3-5),
 * `exp` (item 9); then the nonce (item 11) when the caller has one: compared directly, as
 * better-auth does, in constant time.
 */
export async function verifyIdTokenJwt(check: IdTokenCheck, idToken: string, nonce: string | null): Promise<JWTPayload> {
  const options = {
    issuer: [...(await check.issuers())],
    audience: check.clientId,
    algorithms: check.algorithms,
    currentDate: check.clock.now(),
    clockTolerance: 5,
  };
  const { jwtVerify, errors } = await loadJose();
  let result;
  try {
    result = await jwtVerify(idToken, await check.keys(false), options);
  } catch (err) {
    if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
    result = await jwtVerify(idToken, await check.keys(true), options);
  }
  const { payload } = result;
  if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== check.clientId) throw new ProfileError("id_token azp is not this client");
  if (nonce !== null && (typeof payload.nonce !== "string" || !constantTimeEqual(payload.nonce, nonce))) {
    throw new ProfileError("id_token nonce does not match");
  }
  return payload;
}

/** OpenID Connect standard claims (Core §5.1), as an id_token and a userinfo endpoint carry them. */
export const oidcClaims = z.looseObject({
  sub: z.string().min(1),
  email: z.string().optional(),
  email_verified: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]).optional(),
  name: z.string().optional(),
  picture: z.string().optional(),
});

/** `sub`, `email`, `email_verified`, `name`, `picture` → the standard user info (ProfileError without sub or email). */
export function userFromClaims(claims: unknown): StandardUserInfo {
  const parsed = oidcClaims.safeParse(claims);
  if (!parsed.success) throw new ProfileError("the claims lack sub");
  const c = parsed.data;
  return toStandardUserInfo({ id: c.sub, email: c.email, name: c.name, image: c.picture, emailVerified: c.email_verified });
}

/** A failure that is the token's fault (401 INVALID_TOKEN), as opposed to the provider's (500). */
export function isTokenRejection(err: unknown): boolean {
  return (jose !== undefined && err instanceof jose.errors.JOSEError) || err instanceof ProfileError;
}
