import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
/**
 * One error type, one table (ARCHITECTURE.md style 2). Services throw `new AuthError(code)`;
 * the tRPC error formatter and the REST bridge both read status and public message from here.
 * Codes are part of the wire contract: add new ones, never rename.
 */
export const ERRORS = {
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
  EMAIL_CAN_NOT_BE_UPDATED: [400, "Email can not be updated"],
  INVALID_TOKEN: [400, "Invalid token"],
  SESSION_NOT_FOUND: [400, "Session not found"],
  CREDENTIAL_ACCOUNT_NOT_FOUND: [400, "Credential account not found"],
  INVALID_USER_CODE: [400, "Invalid user code"],
  EXPIRED_USER_CODE: [400, "User code has expired"],
  DEVICE_CODE_ALREADY_PROCESSED: [400, "Device code already processed"],
  DEVICE_CODE_NOT_CLAIMED: [400, "Device code has not been claimed: open GET /device with the user_code while signed in first"],
  // 400, account self-service (CONTRACT.md §9)
  NO_FIELDS_TO_UPDATE: [400, "No fields to update"],
  EMAIL_MISMATCH: [400, "Email mismatch"],
  EMAIL_ALREADY_VERIFIED: [400, "Email is already verified"],
  CHANGE_EMAIL_DISABLED: [400, "Change email is disabled"],
  EMAIL_IS_THE_SAME: [400, "Email is the same"],
  ID_TOKEN_NOT_SUPPORTED: [400, "id_token not supported"],
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
  // 400, admin (better-auth's admin plugin codes)
  YOU_CANNOT_BAN_YOURSELF: [400, "You cannot ban yourself"],
  YOU_CANNOT_REMOVE_YOURSELF: [400, "You cannot remove yourself"],
  NOT_IMPERSONATING: [400, "You are not impersonating anyone"],
  NO_DATA_TO_UPDATE: [400, "No data to update"],
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: [400, "Password cannot be updated through update-user. Use the set-user-password endpoint instead"],
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: [400, "You are not allowed to set a non-existent role value"],
  // 400, OAuth social sign-in (CONTRACT.md §5)
  PROVIDER_NOT_FOUND: [400, "Provider not found"],
  INVALID_CALLBACK_REQUEST: [400, "Invalid callback request"],
  STATE_MISMATCH: [400, "State mismatch: the sign-in request is unknown, expired, already used or was started in another browser"],
  ISSUER_MISMATCH: [400, "Issuer mismatch: the authorization response does not come from the provider the flow was started with"],
  ACCOUNT_NOT_FOUND: [400, "Account not found"],
  AMBIGUOUS_ACCOUNT: [400, "Multiple accounts share this account ID. Pass a providerId to disambiguate."],
  FAILED_TO_UNLINK_LAST_ACCOUNT: [400, "You can't unlink your last account"],
  FAILED_TO_GET_ACCESS_TOKEN: [400, "Failed to get a valid access token"],
  REFRESH_TOKEN_NOT_FOUND: [400, "Refresh token not found"],
  // 400, two-factor (better-auth's two-factor plugin codes; src/modules/two-factor)
  OTP_HAS_EXPIRED: [400, "OTP has expired"],
  OTP_NOT_CONFIGURED: [400, "otp isn't configured"],
  TOTP_NOT_ENABLED: [400, "TOTP not enabled"],
  TWO_FACTOR_NOT_ENABLED: [400, "Two factor isn't enabled"],
  BACKUP_CODES_NOT_ENABLED: [400, "Backup codes aren't enabled"],
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: [400, "Too many attempts. Please request a new code."],
  // 400, passkey (better-auth's passkey plugin codes; src/modules/passkey)
  CHALLENGE_NOT_FOUND: [400, "Challenge not found"],
  FAILED_TO_VERIFY_REGISTRATION: [400, "Failed to verify registration"],
  AUTHENTICATION_FAILED: [400, "Authentication failed"],
  // 401
  UNAUTHORIZED: [401, "Unauthorized"],
  INVALID_EMAIL_OR_PASSWORD: [401, "Invalid email or password"],
  // 401, two-factor and passkey
  INVALID_CODE: [401, "Invalid code"],
  INVALID_BACKUP_CODE: [401, "Invalid backup code"],
  INVALID_TWO_FACTOR_COOKIE: [401, "Invalid two factor cookie"],
  PASSKEY_NOT_FOUND: [401, "Passkey not found"],
  YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY: [401, "You are not allowed to register this passkey"],
  INVALID_USERNAME_OR_PASSWORD: [401, "Invalid username or password"],
  /** A sign-in or link-social ID token that fails verification (signature, iss, aud, exp, nonce), is stale, or was already used (docs/security.md): CONTRACT.md §9. */
  INVALID_ID_TOKEN: [401, "Invalid token", "INVALID_TOKEN"],
  // 403
  BANNED_USER: [403, "You have been banned from this application"],
  EMAIL_NOT_VERIFIED: [403, "Email not verified"],
  EMAIL_PASSWORD_SIGN_UP_DISABLED: [403, "Email and password sign up is not enabled"],
  INVALID_ORIGIN: [403, "Invalid origin"],
  MISSING_OR_NULL_ORIGIN: [403, "Missing or null Origin"],
  INVALID_CALLBACK_URL: [403, "Invalid callbackURL"],
  DEVICE_CODE_CLAIMED_BY_ANOTHER_USER: [403, "This code was claimed by another user"],
  SESSION_NOT_FRESH: [403, "Session is not fresh"],
  IMPERSONATION_NOT_ALLOWED: [403, "Impersonation sessions cannot do this: it creates or changes access that outlives the impersonation"],
  // 403, admin: a missing permission (better-auth's codes)
  YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS: [403, "You are not allowed to create users"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS: [403, "You are not allowed to list users"],
  YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE: [403, "You are not allowed to change users role"],
  YOU_ARE_NOT_ALLOWED_TO_BAN_USERS: [403, "You are not allowed to ban users"],
  YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS: [403, "You are not allowed to impersonate users"],
  YOU_CANNOT_IMPERSONATE_ADMINS: [403, "You cannot impersonate admins"],
  YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS: [403, "You are not allowed to delete users"],
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD: [403, "You are not allowed to set users password"],
  YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL: [403, "You are not allowed to update users email"],
  YOU_ARE_NOT_ALLOWED_TO_GET_USER: [403, "You are not allowed to get user"],
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS: [403, "You are not allowed to update users"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS: [403, "You are not allowed to list users sessions"],
  YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS: [403, "You are not allowed to revoke users sessions"],
  YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS: [403, "You are not allowed to list audit events"],
  // 404
  NOT_FOUND: [404, "Not found"],
  USER_NOT_FOUND: [404, "User not found"],
  // 409
  USER_ALREADY_EXISTS: [409, "User already exists. Use another email."],
  USERNAME_IS_ALREADY_TAKEN: [409, "Username is already taken. Please try another."],
  ACCOUNT_ALREADY_LINKED_TO_DIFFERENT_USER: [409, "Account already linked to a different user"],
  ACCOUNT_NOT_LINKED: [409, "Account not linked: the provider has not verified this email, so it cannot be linked to the existing user"],
  // 413, 415, 429
  PAYLOAD_TOO_LARGE: [413, "Request body is larger than 64 KiB"],
  UNSUPPORTED_MEDIA_TYPE: [415, "Unsupported content type"],
  RATE_LIMITED: [429, "Too many requests. Please try again later."],
  ACCOUNT_TEMPORARILY_LOCKED: [429, "Too many failed verification attempts. Your account is temporarily locked. Please try again later."],
  // 408, 431: node:http refuses the request before any route or procedure (rest-bridge/server.ts clientError)
  REQUEST_TIMEOUT: [408, "Request timeout"],
  REQUEST_HEADER_FIELDS_TOO_LARGE: [431, "Request header fields too large"],
  // 500
  INTERNAL_SERVER_ERROR: [500, "Unexpected failure"],
  OAUTH_PROVIDER_ERROR: [500, "The identity provider failed or answered unexpectedly"],
  // 503: GET /ready (the database does not answer)
  NOT_READY: [503, "Service not ready"],
} as const satisfies Record<string, readonly [number, string] | readonly [number, string, string]>;

export type ErrorCode = keyof typeof ERRORS;

export interface ErrorIssue {
  path: string;
  message: string;
}

const TRPC_CODE_BY_STATUS: Record<number, TRPC_ERROR_CODE_KEY> = {
  400: "BAD_REQUEST",
  401: "UNAUTHORIZED",
  403: "FORBIDDEN",
  404: "NOT_FOUND",
  409: "CONFLICT",
  413: "PAYLOAD_TOO_LARGE",
  415: "UNSUPPORTED_MEDIA_TYPE",
  429: "TOO_MANY_REQUESTS",
  500: "INTERNAL_SERVER_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

/**
 * A TRPCError whose tRPC code follows the HTTP status of the contract's code, so tRPC's HTTP
 * adapter and the REST bridge answer with the same status.
 */
export class AuthError extends TRPCError {
  /** The table's key. */
  readonly authCode: ErrorCode;
  /**
   * The code clients see: the key, or the entry's third element when one wire code answers with
   * two statuses (INVALID_TOKEN: 400 for a mailed link, 401 for a sign-in ID token).
   */
  readonly wireCode: ErrorCode;
  readonly status: number;
  readonly issues: ErrorIssue[] | undefined;
  /** Extra response headers (Retry-After on 429). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; issues?: ErrorIssue[]; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    const entry: readonly [number, string, string?] = ERRORS[code];
    const [status, publicMessage] = entry;
    super({ code: TRPC_CODE_BY_STATUS[status] ?? "INTERNAL_SERVER_ERROR", message: options.message ?? publicMessage, cause: options.cause });
    this.name = "AuthError";
    this.authCode = code;
    this.wireCode = (entry[2] ?? code) as ErrorCode;
    this.status = status;
    this.issues = options.issues;
    this.headers = options.headers;
  }
}

export type OAuthErrorCode =
  | "INVALID_REQUEST"
  | "INVALID_CLIENT"
  | "INVALID_GRANT"
  | "UNSUPPORTED_GRANT_TYPE"
  | "AUTHORIZATION_PENDING"
  | "SLOW_DOWN"
  | "EXPIRED_TOKEN"
  | "ACCESS_DENIED";

/**
 * An OAuth 2.0 error (RFC 6749 §5.2, RFC 8628 §3.5): the REST bridge answers
 * `{ error, error_description }` instead of `{ code, message }`; tRPC callers see `data.authCode`
 * (the RFC code upper-cased) like any other error.
 */
export class OAuthError extends AuthError {
  /** The RFC's code, e.g. "authorization_pending". */
  readonly oauthError: string;

  constructor(code: OAuthErrorCode, description?: string);
  /**
   * Another contract code in the RFC's shape under the RFC name `error` (device approve/deny answer
   * INVALID_USER_CODE as `invalid_request`, like better-auth's device plugin), so tRPC's
   * `data.authCode` keeps the precise code.
   */
  constructor(code: ErrorCode, description: string, error: string);
  constructor(code: ErrorCode, description?: string, error: string = code.toLowerCase()) {
    super(code, description === undefined ? {} : { message: description });
    this.name = "OAuthError";
    this.oauthError = error;
  }
}

export interface ErrorBody {
  code: string;
  message: string;
  issues?: ErrorIssue[];
  requestId?: string;
}

/** The public body of an error: never an internal message or a stack for 5xx. */
export function errorBody(err: AuthError, requestId?: string): ErrorBody {
  if (err.status >= 500) {
    return { code: err.wireCode, message: ERRORS[err.authCode][1], ...(requestId ? { requestId } : {}) };
  }
  return { code: err.wireCode, message: err.message, ...(err.issues ? { issues: err.issues } : {}) };
}
