import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { managementOperations } from "./management-doc.ts";

const switchable = true;
const redirect = z.object({ redirect: z.literal(true), url: z.string() });
const metadata = z.looseObject({ issuer: z.string(), authorization_endpoint: z.string(), token_endpoint: z.string(), jwks_uri: z.string() });
const tokenAnswer = z.object({
  access_token: z.string(),
  token_type: z.literal("Bearer"),
  expires_in: z.number(),
  expires_at: z.number(),
  scope: z.string(),
  refresh_token: z.string().optional(),
  id_token: z.string().optional(),
});
const clientAuthErrors = { CLIENT_AUTHENTICATION_FAILED: "invalid_client", INVALID_REQUEST: "invalid_request" } as const;
const claims = z.looseObject({ sub: z.string() });
const introspection = z.union([
  z.object({ active: z.literal(false) }),
  z.looseObject({ active: z.literal(true), token_type: z.string(), scope: z.string(), client_id: z.string(), sub: z.string(), iat: z.number(), exp: z.number(), iss: z.string() }),
]);

/** OpenAPI docs of oidc-provider.router.ts (src/openapi/doc.ts): @better-auth/oauth-provider's paths, the RFCs' shapes. */
export const oidcProviderDoc = moduleDoc({
  tag: "OpenID provider",
  description:
    "Portcullis as an OAuth 2.1 / OpenID Connect provider (docs/oidc-provider.md): authorization code with PKCE (S256 only), refresh tokens with rotation, " +
    "client credentials, userinfo, introspection (RFC 7662), revocation (RFC 7009), RP-initiated logout. Errors of the OAuth endpoints in RFC 6749 §5.2's shape. " +
    "Off (404) when `oidcProvider.enabled` is false.",
  operations: {
    ...managementOperations,
    "oauth2.openidConfiguration": { summary: "OpenID Connect Discovery 1.0 metadata", access: "public", switchable, output: metadata },
    "oauth2.authorizationServer": { summary: "RFC 8414 authorization server metadata", access: "public", switchable, output: metadata },
    "oauth2.authorize": {
      summary: "Authorization request (RFC 6749 §4.1.1, OIDC Core §3.1.2)",
      description:
        "302 to the sign-in page, the consent page, or the client's redirect URI with `code`, `state` and `iss` (RFC 9207). An unknown client or an " +
        "unregistered redirect URI is shown, never redirected. A fetch asking for JSON gets `{ redirect, url }`.",
      access: "optional",
      switchable,
      redirect: "always",
      output: redirect,
      oauthErrors: { INVALID_CLIENT: "invalid_client", CLIENT_DISABLED: "invalid_client", INVALID_REDIRECT_URI: "invalid_request" },
    },
    "oauth2.consent": {
      summary: "The consent page's decision",
      description: "For the signed `oauth_query` shown to this session: allow (possibly fewer scopes) or deny; answers where the browser goes next.",
      access: "own-session",
      switchable,
      output: redirect,
      errors: ["INVALID_OAUTH_QUERY", "OAUTH_QUERY_OF_ANOTHER_SESSION"],
      oauthErrors: { INVALID_SCOPE: "invalid_scope", INVALID_CLIENT: "invalid_client", INVALID_REDIRECT_URI: "invalid_request" },
    },
    "oauth2.continue": {
      summary: "Continue the authorization request after signing in",
      access: "own-session",
      switchable,
      output: redirect,
      errors: ["INVALID_OAUTH_QUERY"],
      oauthErrors: { INVALID_CLIENT: "invalid_client", INVALID_REDIRECT_URI: "invalid_request" },
    },
    "oauth2.token": {
      summary: "Token endpoint (RFC 6749 §3.2)",
      description: "`authorization_code` (PKCE S256), `refresh_token` (rotated; a reused one revokes its grant), `client_credentials`.",
      access: "public",
      switchable,
      output: tokenAnswer,
      oauthErrors: {
        ...clientAuthErrors,
        INVALID_GRANT: "invalid_grant",
        UNSUPPORTED_GRANT_TYPE: "unsupported_grant_type",
        UNAUTHORIZED_CLIENT: "unauthorized_client",
        INVALID_SCOPE: "invalid_scope",
      },
    },
    "oauth2.userinfo": {
      summary: "UserInfo (OIDC Core §5.3)",
      description: "A bearer access token with `openid`; claims by scope.",
      access: "public",
      switchable,
      output: claims,
      oauthErrors: { INVALID_ACCESS_TOKEN: "invalid_token", INSUFFICIENT_SCOPE: "insufficient_scope" },
    },
    "oauth2.introspect": {
      summary: "Token introspection (RFC 7662)",
      description: "A confidential client's own tokens only.",
      access: "public",
      switchable,
      output: introspection,
      oauthErrors: clientAuthErrors,
    },
    "oauth2.revoke": {
      summary: "Token revocation (RFC 7009)",
      description: "200 whatever the token; a refresh token takes every token of its grant with it.",
      access: "public",
      switchable,
      output: z.object({}),
      oauthErrors: clientAuthErrors,
    },
    "oauth2.endSession": {
      summary: "RP-initiated logout (OpenID Connect RP-Initiated Logout 1.0)",
      description: "Ends the session the `id_token_hint` names; 302 to a registered `post_logout_redirect_uri` with `state`, else `null`.",
      access: "public",
      switchable,
      redirect: "always",
      output: z.union([redirect, z.null()]),
      oauthErrors: { INVALID_REQUEST: "invalid_request", INVALID_CLIENT: "invalid_client" },
    },
    "oauth2.register": {
      summary: "Dynamic client registration (RFC 7591)",
      description:
        "201 with the client and, for a confidential client, its secret (shown once). Open unless `oidcProvider.registration.open` is false; " +
        "with `registration.initialAccessToken`, only `Authorization: Bearer <token>` registers (and may register client_credentials clients).",
      access: "public",
      switchable,
      status: 201,
      output: z.looseObject({ client_id: z.string(), client_id_issued_at: z.number(), redirect_uris: z.array(z.string()), grant_types: z.array(z.string()), token_endpoint_auth_method: z.string() }),
      oauthErrors: {
        INVALID_CLIENT_METADATA: "invalid_client_metadata",
        INVALID_REDIRECT_URI: "invalid_redirect_uri",
        INVALID_SCOPE: "invalid_scope",
        INVALID_INITIAL_ACCESS_TOKEN: "invalid_token",
        REGISTRATION_CLOSED: "access_denied",
      },
    },
    "oauth2.publicClient": {
      summary: "A client's public fields (for consent pages)",
      access: "public",
      switchable,
      output: z.object({
        client_id: z.string(),
        redirect_uris: z.array(z.string()).describe("Always empty: better-auth's shape"),
        client_name: z.string().optional(),
        client_uri: z.string().optional(),
        logo_uri: z.string().optional(),
        tos_uri: z.string().optional(),
        policy_uri: z.string().optional(),
        contacts: z.array(z.string()).optional(),
      }),
      errors: ["OAUTH_CLIENT_NOT_FOUND"],
    },
  },
});
