import type { ProviderConfig } from "./config.ts";
import { ASYMMETRIC_ALGORITHMS, DEFAULT_ID_TOKEN_MAX_AGE_SEC, discoveryCache, jwksCache, userFromClaims, verifyPresentedIdToken, type IdTokenCheck } from "./id-token.ts";
import { getRawProfile, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { responseIssuerOf, toStandardUserInfo, type OAuthProvider, type ProviderContext, type ProviderProfile } from "./provider.ts";

type GenericConfig = Extract<ProviderConfig, { type: "oauth2" }>;

/**
 * ID-token sign-in for a generic provider configured with `discoveryUrl`, or `issuer` and
 * `jwksUrl` (config.ts checks the pair); undefined otherwise. The discovery document is read on
 * first use, not at start, so a provider that is down does not stop the service.
 */
function idTokenVerifier(config: GenericConfig, { http, clock }: ProviderContext): OAuthProvider["verifyIdToken"] {
  if (!config.discoveryUrl && !config.jwksUrl) return undefined;
  const discovery = config.discoveryUrl ? discoveryCache(http, config.discoveryUrl, clock) : null;
  const check: IdTokenCheck = {
    clientId: config.clientId,
    issuers: async () => [config.issuer ?? (await discovery!()).issuer],
    keys: jwksCache(http, async () => config.jwksUrl ?? (await discovery!()).jwksUri, clock),
    algorithms: ASYMMETRIC_ALGORITHMS,
    clock,
  };
  return async (idToken, nonce) => {
    const { payload, expiresAt } = await verifyPresentedIdToken(check, idToken, nonce, config.idTokenMaxAgeSec ?? DEFAULT_ID_TOKEN_MAX_AGE_SEC);
    const user = config.mapIdTokenClaims ? toStandardUserInfo(await config.mapIdTokenClaims(payload)) : userFromClaims(payload);
    return { user, raw: payload, expiresAt };
  };
}

/**
 * Any OAuth 2.0 provider (the seed's auth_url, token_url, user_info_url, map_user_info): the
 * operator's mapUserInfo turns the raw user-info JSON into the standard form; a result without
 * id or email fails the flow.
 */
export function genericProvider(name: string, config: GenericConfig, context: ProviderContext): OAuthProvider {
  const { http } = context;
  const client: ClientCredentials = {
    clientId: config.clientId,
    clientSecret: config.clientSecret,
    tokenUrl: config.tokenUrl,
    authMethod: config.tokenEndpointAuthMethod,
  };
  const fetchProfile = async (accessToken: string): Promise<ProviderProfile> => {
    const raw = await getRawProfile(http, config.userInfoUrl, accessToken);
    return { user: toStandardUserInfo(await config.mapUserInfo(raw)), raw };
  };
  const provider = oauth2Provider({
    name,
    type: "oauth2",
    defaultScopes: config.scopes,
    usesNonce: false,
    responseIssuer: responseIssuerOf(config),
    authUrl: config.authUrl,
    authorizationParams: config.authorizationParams,
    http,
    client,
    fetchProfile,
  });
  const verifyIdToken = idTokenVerifier(config, context);
  return verifyIdToken ? { ...provider, verifyIdToken } : provider;
}
