import type { ProviderConfig } from "./config.ts";
import { discordProvider } from "./discord.ts";
import { githubProvider } from "./github.ts";
import { genericProvider } from "./generic.ts";
import { googleProvider } from "./google.ts";
import type { OAuthProvider, ProviderContext } from "./provider.ts";

export type { OAuthProvider, ProviderContext, ProviderProfile, StandardUserInfo, TokenSet, VerifiedIdToken } from "./provider.ts";
export { issuerAccepted, ProfileError, splitScopes } from "./provider.ts";
export { CLOCK_TOLERANCE_SEC, IdTokenRefusal, isTokenRejection, unverifiedExpiry } from "./id-token.ts";

export function createProvider(name: string, config: ProviderConfig, context: ProviderContext): OAuthProvider {
  switch (config.type) {
    case "oauth2":
      return genericProvider(name, config, context);
    case "google":
      return googleProvider(name, config, context);
    case "github":
      return githubProvider(name, config, context);
    case "discord":
      return discordProvider(name, config, context);
  }
}

/** The registry: one provider per configured name. */
export function createProviders(configs: Record<string, ProviderConfig>, context: ProviderContext): Map<string, OAuthProvider> {
  return new Map(Object.entries(configs).map(([name, config]) => [name, createProvider(name, config, context)]));
}
