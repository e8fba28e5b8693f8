import type { ProviderConfig } from "./config.ts";
import { getRawProfile, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { responseIssuerOf, toStandardUserInfo, type OAuthProvider, type ProviderContext, type ProviderProfile } from "./provider.ts";

type GenericConfig = Extract<ProviderConfig, { type: "oauth2" }>;

/**
 * Any OAuth 2.0 provider (the seed's auth_url, token_url, user_info_url, map_user_info): the
 * operator's mapUserInfo turns the raw user-info JSON into the standard form; a result without
 * id or email fails the flow.
 */
export function genericProvider(name: string, config: GenericConfig, { http }: ProviderContext): OAuthProvider {
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
  return oauth2Provider({
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
}
