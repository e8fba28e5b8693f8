import type { JSONWebKeySet, JWTPayload, JWTVerifyGetKey } from "jose";

/** jose, loaded on the first ID token. */
let jose: typeof import("jose") | undefined;
const loadJose = async () => (jose ??= await import("jose"));
import { z } from "zod";
import type { Clock } from "../core/clock.ts";
import { constantTimeEqual } from "../crypto/tokens.ts";
import { HttpError, request, type HttpClient } from "../http/client.ts";
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

/** jose's leeway on `exp` (and ours on the ledger's expiry: a token is remembered this long past its exp). */
export const CLOCK_TOLERANCE_SEC = 5;

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
    clockTolerance: CLOCK_TOLERANCE_SEC,
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

/**
 * OpenID Connect standard claims (Core §5.1), as an id_token and a userinfo endpoint carry them.
 * A null name or picture is passed on as null (some providers send them so).
 */
export const oidcClaims = z.looseObject({
  sub: z.string().min(1),
  email: z.string().optional(),
  email_verified: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]).optional(),
  name: z.string().nullish(),
  picture: z.string().nullish(),
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

/** Why a presented ID token is too old, too young or too long-lived (logged as the refusal's reason). */
export type FreshnessRefusal = "ID_TOKEN_CLAIM_MISSING" | "ID_TOKEN_ISSUED_IN_FUTURE" | "ID_TOKEN_TOO_OLD" | "ID_TOKEN_EXPIRES_TOO_LATE";

/** A presented ID token refused for a reason of ours (not jose's): `code` is what the log shows. */
export class IdTokenRefusal extends ProfileError {
  override name = "IdTokenRefusal";
  constructor(
    readonly code: FreshnessRefusal | "ID_TOKEN_REPLAYED",
    message: string,
  ) {
    super(message);
  }
}

/** Default `idTokenMaxAgeSec`: Google One Tap and native SDKs present a token within seconds of getting it. */
export const DEFAULT_ID_TOKEN_MAX_AGE_SEC = 600;
/** A provider's clock may run this far ahead of ours: an `iat` up to a minute in the future is accepted. */
const ISSUED_AT_SKEW_SEC = 60;
/** The farthest `exp` a presented token may name: Google's live an hour, no provider we know issues beyond a day. */
export const ID_TOKEN_MAX_LIFETIME_SEC = 24 * 3600;

/**
 * A presented ID token must be young and short-lived (docs/security.md): `iat` and `exp` present
 * (OIDC Core §2 makes both REQUIRED), `iat` no more than `maxAgeSec` ago and not in the future
 * beyond the skew, `exp` no more than a day ahead. Together with the single-use ledger, a token
 * that leaked (a log, a backup, a stored account) cannot be presented later. Returns `exp`.
 */
export function checkFreshness(payload: JWTPayload, now: Date, maxAgeSec: number): Date {
  const { iat, exp } = payload;
  if (typeof iat !== "number" || typeof exp !== "number") throw new IdTokenRefusal("ID_TOKEN_CLAIM_MISSING", "id_token lacks iat or exp");
  const nowSec = now.getTime() / 1000;
  if (iat > nowSec + ISSUED_AT_SKEW_SEC) throw new IdTokenRefusal("ID_TOKEN_ISSUED_IN_FUTURE", "id_token iat is in the future");
  if (nowSec - iat > maxAgeSec + ISSUED_AT_SKEW_SEC) throw new IdTokenRefusal("ID_TOKEN_TOO_OLD", "id_token was issued too long ago");
  if (exp - nowSec > ID_TOKEN_MAX_LIFETIME_SEC + ISSUED_AT_SKEW_SEC) throw new IdTokenRefusal("ID_TOKEN_EXPIRES_TOO_LATE", "id_token exp is too far ahead");
  return new Date(exp * 1000);
}

/** verifyIdTokenJwt, then checkFreshness: what a client-presented ID token goes through. */
export async function verifyPresentedIdToken(check: IdTokenCheck, idToken: string, nonce: string | null, maxAgeSec: number) {
  const payload = await verifyIdTokenJwt(check, idToken, nonce);
  return { payload, expiresAt: checkFreshness(payload, check.clock.now(), maxAgeSec) };
}

/** The latest time a Date holds, in seconds (ECMA-262 §21.4.1.1). */
const MAX_DATE_SEC = 8.64e12;

/**
 * The `exp` of an ID token, read without verifying it (null when it is not a JWS compact JWT
 * with a positive numeric exp): how long to remember a token a provider gave us, so that it is
 * never accepted back. Plain decoding (RFC 7519 §7.2 steps 7-10), so a code flow never loads jose.
 */
export function unverifiedExpiry(idToken: string): Date | null {
  const parts = idToken.split(".");
  if (parts.length !== 3) return null;
  try {
    const { exp } = JSON.parse(Buffer.from(parts[1]!, "base64url").toString("utf8")) as { exp?: unknown };
    return typeof exp === "number" && Number.isFinite(exp) && exp > 0 ? new Date(Math.min(exp, MAX_DATE_SEC) * 1000) : null;
  } catch {
    return null;
  }
}
