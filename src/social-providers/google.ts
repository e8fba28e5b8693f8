import type { ProviderConfig } from "./config.ts";
import { DEFAULT_ID_TOKEN_MAX_AGE_SEC, jwksCache, oidcClaims, userFromClaims, verifyIdTokenJwt, verifyPresentedIdToken, type IdTokenCheck } from "./id-token.ts";
import { getWithToken, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { ProfileError, withoutUndefined, type OAuthProvider, type ProviderContext, type ProviderProfile, type VerifiedIdToken } from "./provider.ts";

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

export function googleProvider(name: string, config: GoogleConfig, { http, clock }: ProviderContext): OAuthProvider {
  const urls = {
    ...GOOGLE_DEFAULTS,
    ...withoutUndefined({ authUrl: config.authUrl, tokenUrl: config.tokenUrl, userInfoUrl: config.userInfoUrl, jwksUrl: config.jwksUrl }),
  };
  const issuers = config.issuer ? [config.issuer] : GOOGLE_ISSUERS;
  const client: ClientCredentials = { clientId: config.clientId, clientSecret: config.clientSecret, tokenUrl: urls.tokenUrl, authMethod: "client_secret_post" };
  const check: IdTokenCheck = {
    clientId: config.clientId,
    issuers: async () => issuers,
    keys: jwksCache(http, async () => urls.jwksUrl, clock),
    // Google signs its ID tokens with RS256 (Google Identity, "Validating an ID token").
    algorithms: ["RS256"],
    clock,
  };

  /** The code flow's id_token: straight from the token endpoint, so no freshness rule of a presented one. */
  async function verifyIssuedIdToken(idToken: string, nonce: string | null): Promise<ProviderProfile> {
    const payload = await verifyIdTokenJwt(check, idToken, nonce);
    return { user: userFromClaims(payload), raw: payload };
  }

  /** Sign-in and linking with an ID token a client presents (One Tap, native apps). */
  async function verifyIdToken(idToken: string, nonce: string | null): Promise<VerifiedIdToken> {
    const { payload, expiresAt } = await verifyPresentedIdToken(check, idToken, nonce, config.idTokenMaxAgeSec ?? DEFAULT_ID_TOKEN_MAX_AGE_SEC);
    return { user: userFromClaims(payload), raw: payload, expiresAt };
  }

  const fetchProfile = async (accessToken: string): Promise<ProviderProfile> => {
    const raw = await getWithToken(http, urls.userInfoUrl, accessToken, oidcClaims);
    return { user: userFromClaims(raw), raw };
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
      return verifyIssuedIdToken(tokens.idToken, expected.nonce);
    },
    verifyIdToken,
  };
}
