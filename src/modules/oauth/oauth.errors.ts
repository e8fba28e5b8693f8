import type { ErrorTable } from "../../error-table.ts";

/**
 * OAuth social sign-in (docs/wire-contract.md §5). Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const oauthErrors = {
  // 400
  ID_TOKEN_NOT_SUPPORTED: [400, "id_token not supported"],
  PROVIDER_NOT_FOUND: [400, "Provider not found"],
  INVALID_CALLBACK_REQUEST: [400, "Invalid callback request"],
  STATE_MISMATCH: [400, "State mismatch: the sign-in request is unknown, expired, already used or was started in another browser"],
  ISSUER_MISMATCH: [400, "Issuer mismatch: the authorization response does not come from the provider the flow was started with"],
  ACCOUNT_NOT_FOUND: [400, "Account not found"],
  AMBIGUOUS_ACCOUNT: [400, "Multiple accounts share this account ID. Pass a providerId to disambiguate."],
  FAILED_TO_UNLINK_LAST_ACCOUNT: [400, "You can't unlink your last account"],
  FAILED_TO_GET_ACCESS_TOKEN: [400, "Failed to get a valid access token"],
  REFRESH_TOKEN_NOT_FOUND: [400, "Refresh token not found"],
  // 401
  /** A sign-in or link-social ID token that fails verification (signature, iss, aud, exp, nonce), is stale, or was already used (docs/security.md): docs/wire-contract.md §9. */
  INVALID_ID_TOKEN: [401, "Invalid token", "INVALID_TOKEN"],
  // 409
  ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER: [409, "Account already linked to a different user"],
  ACCOUNT_NOT_LINKED: [409, "Account not linked: the provider has not verified this email, so it cannot be linked to the existing user"],
  // 500
  OAUTH_PROVIDER_ERROR: [500, "The identity provider failed or answered unexpectedly"],
} as const satisfies ErrorTable;
