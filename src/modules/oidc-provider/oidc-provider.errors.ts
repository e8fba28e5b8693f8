import type { ErrorTable } from "../../error-table.ts";

/**
 * The OpenID provider's failures (docs/oidc-provider.md). Most answer in RFC 6749 §5.2's
 * `{ error, error_description }` shape (OAuthError with the RFC name); the codes here keep the
 * precise reason for tRPC callers. Add new ones, never rename.
 */
export const oidcProviderErrors = {
  // 400
  INVALID_SCOPE: [400, "Invalid scope"],
  UNAUTHORIZED_CLIENT: [400, "The client may not use this grant type"],
  INVALID_REDIRECT_URI: [400, "Invalid redirect_uri"],
  INVALID_CLIENT_METADATA: [400, "Invalid client metadata"],
  INVALID_OAUTH_QUERY: [400, "Invalid or expired oauth_query"],
  CLIENT_DISABLED: [400, "The client is disabled"],
  // 401
  CLIENT_AUTHENTICATION_FAILED: [401, "Client authentication failed"],
  INVALID_ACCESS_TOKEN: [401, "Invalid access token"],
  INVALID_INITIAL_ACCESS_TOKEN: [401, "Registration needs a valid initial access token"],
  // 403
  INSUFFICIENT_SCOPE: [403, "The access token lacks the scope this needs"],
  REGISTRATION_CLOSED: [403, "Client registration is closed"],
  OAUTH_QUERY_OF_ANOTHER_SESSION: [403, "This authorization request belongs to another session"],
  // 404
  OAUTH_CLIENT_NOT_FOUND: [404, "OAuth client not found"],
  OAUTH_CONSENT_NOT_FOUND: [404, "OAuth consent not found"],
} as const satisfies ErrorTable;
