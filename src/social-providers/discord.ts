import { z } from "zod";
import type { ProviderConfig } from "./config.ts";
import { getWithToken, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { responseIssuerOf, toStandardUserInfo, withoutUndefined, type OAuthProvider, type ProviderContext, type ProviderProfile } from "./provider.ts";

type DiscordConfig = Extract<ProviderConfig, { type: "discord" }>;

export const DISCORD_DEFAULTS = {
  authUrl: "https://discord.com/oauth2/authorize",
  tokenUrl: "https://discord.com/api/oauth2/token",
  userInfoUrl: "https://discord.com/api/users/@me",
  scopes: ["identify", "email"],
} as const;

/** GET /users/@me (Discord API v10 User object); `verified` is about the email address. */
const discordUser = z.looseObject({
  id: z.string().min(1),
  username: z.string(),
  global_name: z.string().nullish(),
  avatar: z.string().nullish(),
  email: z.string().nullish(),
  verified: z.boolean().nullish(),
});

function avatarUrl(user: z.output<typeof discordUser>): string {
  if (!user.avatar) {
    // Default avatars: index (id >> 22) % 6 for the new username system.
    return `https://cdn.discordapp.com/embed/avatars/${Number((BigInt(user.id) >> 22n) % 6n)}.png`;
  }
  return `https://cdn.discordapp.com/avatars/${user.id}/${user.avatar}.${user.avatar.startsWith("a_") ? "gif" : "png"}`;
}

export function discordProvider(name: string, config: DiscordConfig, { http }: ProviderContext): OAuthProvider {
  const urls = { ...DISCORD_DEFAULTS, ...withoutUndefined({ authUrl: config.authUrl, tokenUrl: config.tokenUrl, userInfoUrl: config.userInfoUrl }) };
  const client: ClientCredentials = { clientId: config.clientId, clientSecret: config.clientSecret, tokenUrl: urls.tokenUrl, authMethod: "client_secret_basic" };
  const fetchProfile = async (accessToken: string): Promise<ProviderProfile> => {
    const raw = await getWithToken(http, urls.userInfoUrl, accessToken, discordUser);
    const user = toStandardUserInfo({
      id: raw.id,
      email: raw.email,
      name: raw.global_name || raw.username,
      image: /^\d+$/.test(raw.id) ? avatarUrl(raw) : null,
      emailVerified: raw.verified === true,
    });
    return { user, raw };
  };
  return oauth2Provider({
    name,
    type: "discord",
    defaultScopes: config.scopes ?? DISCORD_DEFAULTS.scopes,
    usesNonce: false,
    responseIssuer: responseIssuerOf(config),
    authUrl: urls.authUrl,
    authorizationParams: config.authorizationParams,
    http,
    client,
    fetchProfile,
  });
}
