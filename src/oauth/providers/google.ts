import type { ProviderConfig } from "./config.ts";
import { jwksCache, oidcClaims, userFromClaims, verifyIdTokenJwt, type IdTokenCheck } from "./id-token.ts";
import { getWithToken, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { ProfileError, withoutUndefined, type OAuthProvider, type ProviderContext, type ProviderProfile } from "./provider.ts";

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

  /** The code flow's id_token and sign-in with an ID token (One Tap, native apps) both end here. */
  async function verifyIdToken(idToken: string, nonce: string | null): Promise<ProviderProfile> {
    const payload = await verifyIdTokenJwt(check, idToken, nonce);
    return { user: userFromClaims(payload), raw: payload };
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
      return verifyIdToken(tokens.idToken, expected.nonce);
    },
    verifyIdToken,
  };
}
