import { createLocalJWKSet, jwtVerify, type JSONWebKeySet } from "jose";
import { z } from "zod";
import type { Clock } from "../../config/schema.ts";
import { constantTimeEqual } from "../../crypto/tokens.ts";
import { request, type HttpClient } from "../../http/client.ts";
import type { ProviderConfig } from "./config.ts";
import { getWithToken, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { ProfileError, toStandardUserInfo, withoutUndefined, type OAuthProvider, type ProviderContext, type ProviderProfile } from "./provider.ts";

type GoogleConfig = Extract<ProviderConfig, { type: "google" }>;

export const GOOGLE_DEFAULTS = {
  authUrl: "https://accounts.google.com/o/oauth2/v2/auth",
  tokenUrl: "https://oauth2.googleapis.com/token",
  userInfoUrl: "https://openidconnect.googleapis.com/v1/userinfo",
  jwksUrl: "https://www.googleapis.com/oauth2/v3/certs",
  scopes: ["openid", "email", "profile"],
} as const;

/** Google signs with either spelling of its issuer (Google Identity, "Validating an ID token"). */
const GOOGLE_ISSUERS = ["https://accounts.google.com", "accounts.google.com"];

const JWKS_TTL_MS = 10 * 60 * 1000;
/** A token signed by an unknown key refetches the set, at most this often (key rotation). */
const JWKS_REFETCH_MIN_MS = 30 * 1000;

const jwksSchema = z.object({ keys: z.array(z.looseObject({ kty: z.string() })).max(100) });

/** OpenID Connect standard claims (Core §5.1), as the id_token and the userinfo endpoint carry them. */
const googleClaims = z.looseObject({
  sub: z.string().min(1),
  email: z.string().optional(),
  email_verified: z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]).optional(),
  name: z.string().optional(),
  picture: z.string().optional(),
});

function mapClaims(claims: z.output<typeof googleClaims>) {
  return toStandardUserInfo({ id: claims.sub, email: claims.email, name: claims.name, image: claims.picture, emailVerified: claims.email_verified });
}

function jwksCache(http: HttpClient, url: string, clock: Clock) {
  let cached: { set: ReturnType<typeof createLocalJWKSet>; fetchedAtMs: number } | null = null;
  return async function keys(refresh: boolean) {
    const nowMs = clock.now().getTime();
    const stale = !cached || nowMs - cached.fetchedAtMs > JWKS_TTL_MS || (refresh && nowMs - cached.fetchedAtMs > JWKS_REFETCH_MIN_MS);
    if (stale) {
      const jwks = await request(http, { method: "GET", url, schema: jwksSchema });
      cached = { set: createLocalJWKSet(jwks as JSONWebKeySet), fetchedAtMs: nowMs };
    }
    return cached!.set;
  };
}

export function googleProvider(name: string, config: GoogleConfig, { http, clock }: ProviderContext): OAuthProvider {
  const urls = {
    ...GOOGLE_DEFAULTS,
    ...withoutUndefined({ authUrl: config.authUrl, tokenUrl: config.tokenUrl, userInfoUrl: config.userInfoUrl, jwksUrl: config.jwksUrl }),
  };
  const issuers = config.issuer ? [config.issuer] : GOOGLE_ISSUERS;
  const client: ClientCredentials = { clientId: config.clientId, clientSecret: config.clientSecret, tokenUrl: urls.tokenUrl, authMethod: "client_secret_post" };
  const keys = jwksCache(http, urls.jwksUrl, clock);

  /** OpenID Connect Core §3.1.3.7: signature (RS256, Google's keys), iss, aud, azp, exp, then nonce (§3.1.3.7 item 11). */
  async function verifyIdToken(idToken: string, nonce: string | null) {
    const options = { issuer: issuers, audience: config.clientId, algorithms: ["RS256"], currentDate: clock.now(), clockTolerance: 5 };
    let result;
    try {
      result = await jwtVerify(idToken, await keys(false), options);
    } catch (err) {
      if ((err as { code?: string }).code !== "ERR_JWKS_NO_MATCHING_KEY") throw err;
      result = await jwtVerify(idToken, await keys(true), options);
    }
    const { payload } = result;
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== config.clientId) throw new ProfileError("id_token azp is not this client");
    if (nonce !== null && (typeof payload.nonce !== "string" || !constantTimeEqual(payload.nonce, nonce))) {
      throw new ProfileError("id_token nonce does not match");
    }
    const claims = googleClaims.safeParse(payload);
    if (!claims.success) throw new ProfileError("id_token lacks sub");
    return { user: mapClaims(claims.data), raw: payload };
  }

  const fetchProfile = async (accessToken: string): Promise<ProviderProfile> => {
    const raw = await getWithToken(http, urls.userInfoUrl, accessToken, googleClaims);
    return { user: mapClaims(raw), raw };
  };

  return {
    ...oauth2Provider({
      name,
      type: "google",
      defaultScopes: config.scopes ?? GOOGLE_DEFAULTS.scopes,
      usesNonce: true,
      // Google names itself in `iss` on its authorization responses too (RFC 9207).
      responseIssuer: { issuers, required: config.requireIssuerParameter === true },
      authUrl: urls.authUrl,
      authorizationParams: config.authorizationParams,
      http,
      client,
      fetchProfile,
    }),
    // Sign-in trusts the verified id_token only; Google always sends one for the openid scope.
    userInfo: async (tokens, expected) => {
      if (!tokens.idToken) throw new ProfileError("no id_token in the token response");
      return verifyIdToken(tokens.idToken, expected.nonce);
    },
  };
}
