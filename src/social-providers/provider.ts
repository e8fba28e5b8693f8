import { z } from "zod";
import type { Clock } from "../core/clock.ts";
import type { HttpClient } from "../http/client.ts";
import { isSafeImageUrl } from "../security/image-url.ts";

/**
 * The standard user info every provider maps to (docs/wire-contract.md §5; the seed's map_user_info
 * result): `{ id, email, name?, image?, emailVerified? }`. GitHub and Discord ids are numbers or
 * numeric strings; both become strings. emailVerified defaults to false: an address counts as
 * proven only when the provider says so.
 */
export const standardUserInfoSchema = z.object({
  id: z.union([z.string().trim().min(1).max(255), z.number().int().nonnegative()]).transform(String),
  email: z.string().trim().min(1).max(320),
  // Name and image stay absent (undefined) when the provider did not send them and null when it
  // sent null: account-info answers them as they came, like better-auth; a new user gets "" and null.
  name: z.string().max(1024).nullish(),
  // The user-image rule of our own endpoints; an unsafe or oversized picture
  // from the provider is dropped to null rather than failing the sign-in.
  image: z
    .string()
    .nullish()
    .catch(null)
    .transform((v) => (v === undefined ? undefined : v && isSafeImageUrl(v) ? v : null)),
  emailVerified: z.boolean().nullish().transform((v) => v ?? false),
});

export type StandardUserInfo = z.output<typeof standardUserInfoSchema>;
/** What an operator's `mapUserInfo` returns. */
export type MappedUserInfo = z.input<typeof standardUserInfoSchema>;
export type MapUserInfo = (raw: Record<string, unknown>) => MappedUserInfo | Promise<MappedUserInfo>;

/** The provider's own user-info JSON: an object, whatever else it holds. */
export const rawProfileSchema = z.record(z.string(), z.unknown());

export interface ProviderProfile {
  user: StandardUserInfo;
  /** The raw provider profile (account-info's `data`). */
  raw: unknown;
}

/** An ID token a client presented that passed every check (verifyIdToken): its user, and its `exp`. */
export interface VerifiedIdToken extends ProviderProfile {
  expiresAt: Date;
}

/** RFC 6749 §5.1 token response, as the flow keeps it. */
export interface TokenSet {
  accessToken: string;
  refreshToken: string | null;
  idToken: string | null;
  expiresInSec: number | null;
  refreshTokenExpiresInSec: number | null;
  /**
   * The granted scope string exactly as the provider wrote it (RFC 6749 §3.3 spaces, GitHub's
   * commas), so it is stored and returned in the provider's own format; null when the response
   * did not say (RFC 6749 §5.1: then as requested).
   */
  scope: string | null;
}

export interface AuthorizationRequest {
  state: string;
  /** RFC 7636 §4.2 S256 challenge: sent by every provider, always. */
  codeChallenge: string;
  redirectUri: string;
  scopes: string[];
  /** OpenID Connect Core §3.1.2.1 nonce, for providers whose id_token is checked. */
  nonce: string | null;
}

export interface ProviderContext {
  http: HttpClient;
  clock: Clock;
}

export type ProviderType = "oauth2" | "google" | "github" | "discord";

/** RFC 9207 §2.4: the `iss` an authorization response may carry, and whether it must. */
export interface ResponseIssuer {
  issuers: readonly string[];
  required: boolean;
}

/** From a provider's `issuer` / `requireIssuerParameter` options; null when the issuer is unknown. */
export function responseIssuerOf(config: { issuer?: string | undefined; requireIssuerParameter?: boolean | undefined }): ResponseIssuer | null {
  return config.issuer ? { issuers: [config.issuer], required: config.requireIssuerParameter === true } : null;
}

/**
 * RFC 9207 §2.4: an `iss` that is not the issuer's identifier (simple string comparison,
 * RFC 3986 §6.2.1) is refused; a missing one only when the provider always sends it.
 * Unknown issuer: nothing to compare with.
 */
export function issuerAccepted(expected: ResponseIssuer | null, iss: string | undefined): boolean {
  if (!expected) return true;
  if (iss === undefined) return !expected.required;
  return expected.issuers.includes(iss);
}

export interface OAuthProvider {
  /** The registered name: the `{provider}` path segment and the accounts' providerId. */
  readonly name: string;
  readonly type: ProviderType;
  readonly defaultScopes: readonly string[];
  /** Sends a nonce and checks it in the id_token (OpenID providers). */
  readonly usesNonce: boolean;
  /** RFC 9207: the issuer its authorization responses name, when known. */
  readonly responseIssuer: ResponseIssuer | null;
  authorizationUrl(request: AuthorizationRequest): string;
  /** RFC 6749 §4.1.3 with the RFC 7636 §4.5 code_verifier. */
  exchangeCode(input: { code: string; codeVerifier: string; redirectUri: string }): Promise<TokenSet>;
  /** RFC 6749 §6. */
  refresh(refreshToken: string): Promise<TokenSet>;
  /** The user behind freshly issued tokens (sign-in); checks the id_token where there is one. */
  userInfo(tokens: TokenSet, expected: { nonce: string | null }): Promise<ProviderProfile>;
  /** A live user-info call with a stored access token (account-info). */
  fetchProfile(accessToken: string): Promise<ProviderProfile>;
  /**
   * Sign-in (or link-social) with an ID token the client already holds (native apps, Google One
   * Tap): the user from its verified claims (OpenID Connect Core §3.1.3.7), the nonce compared
   * when one is given, and the token fresh (id-token.ts checkFreshness: `iat` within the
   * provider's `idTokenMaxAgeSec`, `exp` within 24 h). Absent: the provider cannot check ID
   * tokens. Throws a jose error or ProfileError for a token that fails, HttpError when the keys
   * (or the discovery document) cannot be fetched. Single use is the caller's (a ledger in the database).
   */
  verifyIdToken?(idToken: string, nonce: string | null): Promise<VerifiedIdToken>;
}

/** Splits a scope string: RFC 6749 §3.3 uses spaces; GitHub answers with commas. */
export function splitScopes(scope: string | null | undefined): string[] {
  return scope ? [...new Set(scope.split(/[\s,]+/).filter(Boolean))] : [];
}

/** Thrown when a profile cannot be mapped (no id, no email): the flow answers OAUTH_PROVIDER_ERROR. */
export class ProfileError extends Error {
  override name = "ProfileError";
}

export function toStandardUserInfo(mapped: unknown): StandardUserInfo {
  const parsed = standardUserInfoSchema.safeParse(mapped);
  if (!parsed.success) {
    const fields = [...new Set(parsed.error.issues.map((i) => i.path.join(".") || "(result)"))].join(", ");
    throw new ProfileError(`user info mapping is missing or has bad ${fields}`);
  }
  return parsed.data;
}

/** Config overrides that are set (so `{ ...defaults, ...overrides }` keeps the defaults). */
export function withoutUndefined<T extends Record<string, unknown>>(o: T): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as { [K in keyof T]?: Exclude<T[K], undefined> };
}
