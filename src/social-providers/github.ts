import { z } from "zod";
import { HttpError } from "../http/client.ts";
import type { ProviderConfig } from "./config.ts";
import { getWithToken, oauth2Provider, type ClientCredentials } from "./oauth2.ts";
import { responseIssuerOf, toStandardUserInfo, withoutUndefined, type OAuthProvider, type ProviderContext, type ProviderProfile } from "./provider.ts";

type GithubConfig = Extract<ProviderConfig, { type: "github" }>;

export const GITHUB_DEFAULTS = {
  authUrl: "https://github.com/login/oauth/authorize",
  tokenUrl: "https://github.com/login/oauth/access_token",
  userInfoUrl: "https://api.github.com/user",
  emailsUrl: "https://api.github.com/user/emails",
  scopes: ["read:user", "user:email"],
} as const;

/** GitHub's REST API wants a versioned media type (and a User-Agent, which the wrapper sends). */
const API_HEADERS = { accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28" };

const githubUser = z.looseObject({
  id: z.number().int().nonnegative(),
  login: z.string(),
  name: z.string().nullish(),
  email: z.string().nullish(),
  avatar_url: z.string().nullish(),
});

const githubEmails = z.array(
  z.looseObject({ email: z.string(), primary: z.boolean().default(false), verified: z.boolean().default(false) }),
);

type GithubEmail = z.output<typeof githubEmails>[number];

/**
 * The address and whether GitHub verified it. A public profile email is looked up in
 * /user/emails for its verified flag; a private one (profile email null) falls back to the
 * primary verified address of /user/emails, then the primary, then any verified one.
 */
function chooseEmail(profileEmail: string | null | undefined, emails: GithubEmail[]): { email: string; verified: boolean } | null {
  if (profileEmail) {
    const listed = emails.find((e) => e.email.toLowerCase() === profileEmail.toLowerCase());
    return { email: profileEmail, verified: listed?.verified ?? false };
  }
  const pick = emails.find((e) => e.primary && e.verified) ?? emails.find((e) => e.primary) ?? emails.find((e) => e.verified);
  return pick ? { email: pick.email, verified: pick.verified } : null;
}

export function githubProvider(name: string, config: GithubConfig, { http }: ProviderContext): OAuthProvider {
  const urls = {
    ...GITHUB_DEFAULTS,
    ...withoutUndefined({ authUrl: config.authUrl, tokenUrl: config.tokenUrl, userInfoUrl: config.userInfoUrl, emailsUrl: config.emailsUrl }),
  };
  // GitHub documents client_secret_post for its token endpoint.
  const client: ClientCredentials = { clientId: config.clientId, clientSecret: config.clientSecret, tokenUrl: urls.tokenUrl, authMethod: "client_secret_post" };

  const fetchProfile = async (accessToken: string): Promise<ProviderProfile> => {
    const raw = await getWithToken(http, urls.userInfoUrl, accessToken, githubUser, API_HEADERS);
    let emails: GithubEmail[] = [];
    try {
      emails = await getWithToken(http, urls.emailsUrl, accessToken, githubEmails, API_HEADERS);
    } catch (err) {
      // Without user:email the list is refused; a public email then stays, unverified.
      if (!(err instanceof HttpError) || !raw.email) throw err;
    }
    const chosen = chooseEmail(raw.email, emails);
    const user = toStandardUserInfo({
      id: raw.id,
      email: chosen?.email,
      name: raw.name || raw.login,
      image: raw.avatar_url,
      emailVerified: chosen?.verified ?? false,
    });
    return { user, raw };
  };

  return oauth2Provider({
    name,
    type: "github",
    defaultScopes: config.scopes ?? GITHUB_DEFAULTS.scopes,
    usesNonce: false,
    responseIssuer: responseIssuerOf(config),
    authUrl: urls.authUrl,
    authorizationParams: config.authorizationParams,
    http,
    client,
    fetchProfile,
  });
}
