/**
 * better-auth's side of the loopback OpenID provider (test/harness/oidc.ts). better-auth 1.6's
 * built-in providers have fixed hosts, so the code-flow provider `oidc` is a provider object in
 * better-auth's own `OAuthProvider` shape, built from its own OAuth 2.0 helpers
 * (better-auth/oauth2) and added to `socialProviders` by a plugin's `init`, the way the
 * genericOAuth plugin adds its providers. Unlike genericOAuth it keeps the redirect URI
 * better-auth's core gives it (`/callback/oidc`), so /sign-in/social, /callback/:id,
 * /link-social, /get-access-token, /refresh-token and /account-info all run better-auth's core
 * code, as Portcullis' `oidc` provider (a generic `oauth2` one) runs its own.
 */
import type { BetterAuthPlugin } from "better-auth";
import { createAuthorizationURL, refreshAccessToken, validateAuthorizationCode, type OAuthProvider } from "better-auth/oauth2";
import { createRemoteJWKSet, jwtVerify } from "jose";
import type { TestOidcProvider } from "../harness/oidc.ts";

/** Portcullis' `oidc` provider asks for these (test/harness/oauth-helpers.ts oidcProviders). */
const SCOPES = ["openid", "email", "profile"];

function oidcProvider(oidc: TestOidcProvider): OAuthProvider {
  const d = oidc.discovery;
  const { clientId, clientSecret } = oidc.basicClient;
  return {
    id: "oidc",
    name: "Loopback OIDC",
    createAuthorizationURL: ({ state, scopes, codeVerifier, redirectURI }) =>
      createAuthorizationURL({
        id: "oidc",
        options: { clientId, clientSecret, redirectURI },
        authorizationEndpoint: d.authorization_endpoint,
        scopes: [...SCOPES, ...(scopes ?? [])],
        state,
        codeVerifier,
        redirectURI,
      }),
    validateAuthorizationCode: ({ code, codeVerifier, redirectURI }) =>
      validateAuthorizationCode({
        code,
        codeVerifier,
        redirectURI,
        options: { clientId, clientSecret },
        tokenEndpoint: d.token_endpoint,
        authentication: "basic",
      }),
    refreshAccessToken: (refreshToken) =>
      refreshAccessToken({ refreshToken, options: { clientId, clientSecret }, tokenEndpoint: d.token_endpoint, authentication: "basic" }),
    async getUserInfo(tokens) {
      if (!tokens.accessToken) return null;
      const res = await fetch(d.userinfo_endpoint, { headers: { authorization: `Bearer ${tokens.accessToken}` } });
      if (!res.ok) return null;
      const raw = (await res.json()) as Record<string, unknown>;
      return {
        user: {
          id: raw.sub as string,
          email: raw.email as string | undefined,
          name: raw.name as string | undefined,
          image: raw.picture as string | undefined,
          emailVerified: raw.email_verified === true,
        },
        data: raw,
      };
    },
    options: { clientId, clientSecret },
  };
}

export function loopbackProviders(oidc: TestOidcProvider) {
  return {
    id: "compat-loopback-providers",
    init: (ctx) => ({ context: { socialProviders: [oidcProvider(oidc), ...ctx.socialProviders] } }),
  } satisfies BetterAuthPlugin;
}

/** An id_token from the loopback provider: signature (its JWKS), issuer, audience, expiry, nonce. */
export async function verifyLoopbackIdToken(oidc: TestOidcProvider, audience: string, token: string, nonce?: string): Promise<boolean> {
  try {
    const { payload } = await jwtVerify(token, createRemoteJWKSet(new URL(oidc.discovery.jwks_uri)), { issuer: oidc.issuer, audience });
    return nonce === undefined || payload.nonce === nonce;
  } catch {
    return false;
  }
}
