import type { ErrorTable } from "../error-table.ts";

/**
 * The kernel's codes, which any route may answer: validation, sessions, identity rules, origins,
 * permissions, RFC 6749 token errors, limits and failures. Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const coreErrors = {
  // 400
  VALIDATION_ERROR: [400, "Invalid request"],
  INVALID_JSON: [400, "Request body is not valid JSON"],
  INVALID_EMAIL: [400, "Invalid email"],
  PASSWORD_TOO_SHORT: [400, "Password too short"],
  PASSWORD_TOO_LONG: [400, "Password too long"],
  USERNAME_TOO_SHORT: [400, "Username is too short"],
  USERNAME_TOO_LONG: [400, "Username is too long"],
  INVALID_USERNAME: [400, "Username is invalid"],
  INVALID_PASSWORD: [400, "Invalid password"],
  INVALID_TOKEN: [400, "Invalid token"],
  SESSION_NOT_FOUND: [400, "Session not found"],
  CREDENTIAL_ACCOUNT_NOT_FOUND: [400, "Credential account not found"],
  /** The HTTP parser refused the request (bad chunked body, bad header): node:http's clientError. */
  BAD_REQUEST: [400, "Bad request"],
  // 400, RFC 6749 §5.2 / RFC 8628 §3.5 token errors: thrown as OAuthError, the bridge answers { error, error_description }
  INVALID_REQUEST: [400, "Invalid request"],
  INVALID_CLIENT: [400, "Invalid client_id"],
  INVALID_GRANT: [400, "Invalid device code"],
  UNSUPPORTED_GRANT_TYPE: [400, "Unsupported grant_type"],
  AUTHORIZATION_PENDING: [400, "Authorization pending"],
  SLOW_DOWN: [400, "Polling too frequently"],
  EXPIRED_TOKEN: [400, "Device code has expired"],
  ACCESS_DENIED: [400, "Access denied"],
  // 401
  UNAUTHORIZED: [401, "Unauthorized"],
  /** The key header names no key that authenticates: unknown, disabled, expired, deleted, or its owner banned (docs/machine-access.md). */
  INVALID_API_KEY: [401, "Invalid API key."],
  // 403
  BANNED_USER: [403, "You have been banned from this application"],
  INVALID_ORIGIN: [403, "Invalid origin"],
  MISSING_OR_NULL_ORIGIN: [403, "Missing or null Origin"],
  INVALID_CALLBACK_URL: [403, "Invalid callbackURL"],
  SESSION_NOT_FRESH: [403, "Session is not fresh"],
  API_KEY_SESSION_NOT_ALLOWED: [403, "API-key sessions cannot do this: a key must not become a password, a credential or another key"],
  IMPERSONATION_NOT_ALLOWED: [403, "Impersonation sessions cannot do this: it creates or changes access that outlives the impersonation"],
  // 403, a missing permission (core/permissions.ts; better-auth's admin codes)
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: [403, "You are not allowed to create users"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: [403, "You are not allowed to list users"],
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: [403, "You are not allowed to change users role"],
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: [403, "You are not allowed to ban users"],
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: [403, "You are not allowed to impersonate users"],
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: [403, "You are not allowed to delete users"],
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: [403, "You are not allowed to set users password"],
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL: [403, "You are not allowed to update users email"],
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: [403, "You are not allowed to get user"],
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: [403, "You are not allowed to update users"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: [403, "You are not allowed to list users sessions"],
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: [403, "You are not allowed to revoke users sessions"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS: [403, "You are not allowed to list audit events"],
  YOU_ARE_NOT_ALLOWED_TO_CREATE_API_KEYS: [403, "You are not allowed to create API keys for users"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_API_KEYS: [403, "You are not allowed to list users' API keys"],
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_API_KEYS: [403, "You are not allowed to revoke users' API keys"],
  YOU_ARE_NOT_ALLOWED_TO_VERIFY_API_KEYS: [403, "You are not allowed to verify API keys"],
  YOU_ARE_NOT_ALLOWED_TO_CREATE_OAUTH_CLIENTS: [403, "You are not allowed to create OAuth clients"],
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_OAUTH_CLIENTS: [403, "You are not allowed to update OAuth clients"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_OAUTH_CLIENTS: [403, "You are not allowed to list OAuth clients"],
  YOU_ARE_NOT_ALLOWED_TO_DELETE_OAUTH_CLIENTS: [403, "You are not allowed to delete OAuth clients"],
  // 404
  NOT_FOUND: [404, "Not found"],
  USER_NOT_FOUND: [404, "User not found"],
  // 409
  USER_ALREADY_EXISTS: [409, "User already exists. Use another email."],
  USERNAME_IS_ALREADY_TAKEN: [409, "Username is already taken. Please try another."],
  // 413
  PAYLOAD_TOO_LARGE: [413, "Request body is larger than 64 KiB"],
  // 415
  UNSUPPORTED_MEDIA_TYPE: [415, "Unsupported content type"],
  // 429
  RATE_LIMITED: [429, "Too many requests. Please try again later."],
  /** An API key's `remaining` is spent (docs/machine-access.md). */
  USAGE_EXCEEDED: [429, "API Key has reached its usage limit"],
  // 408, 431: node:http refuses the request before any route or procedure (rest-bridge/server.ts clientError)
  REQUEST_TIMEOUT: [408, "Request timeout"],
  REQUEST_HEADER_FIELDS_TOO_LARGE: [431, "Request header fields too large"],
  // 500
  INTERNAL_SERVER_ERROR: [500, "Unexpected failure"],
} as const satisfies ErrorTable;
