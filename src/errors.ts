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
  // 401
  UNAUTHORIZED: [401, "Unauthorized"],
  INVALID_EMAIL_OR_PASSWORD: [401, "Invalid email or password"],
  INVALID_USERNAME_OR_PASSWORD: [401, "Invalid username or password"],
  // 403
  BANNED_USER: [403, "You have been banned from this application"],
  EMAIL_NOT_VERIFIED: [403, "Email not verified"],
  EMAIL_PASSWORD_SIGN_UP_DISABLED: [403, "Email and password sign up is not enabled"],
  INVALID_ORIGIN: [403, "Invalid origin"],
  MISSING_OR_NULL_ORIGIN: [403, "Missing or null Origin"],
  INVALID_CALLBACK_URL: [403, "Invalid callbackURL"],
  // 404
  NOT_FOUND: [404, "Not found"],
  // 409
  USER_ALREADY_EXISTS: [409, "User already exists. Use another email."],
  USERNAME_IS_ALREADY_TAKEN: [409, "Username is already taken. Please try another."],
  // 413, 415, 429
  PAYLOAD_TOO_LARGE: [413, "Request body is larger than 64 KiB"],
  UNSUPPORTED_MEDIA_TYPE: [415, "Unsupported content type"],
  RATE_LIMITED: [429, "Too many requests. Please try again later."],
  // 500
  INTERNAL_SERVER_ERROR: [500, "Unexpected failure"],
} as const satisfies Record<string, readonly [number, string]>;

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
};

/**
 * A TRPCError whose tRPC code follows the HTTP status of the contract's code, so tRPC's HTTP
 * adapter and the REST bridge answer with the same status.
 */
export class AuthError extends TRPCError {
  readonly authCode: ErrorCode;
  readonly status: number;
  readonly issues: ErrorIssue[] | undefined;
  /** Extra response headers (Retry-After on 429). */
  readonly headers: Record<string, string> | undefined;

  constructor(
    code: ErrorCode,
    options: { message?: string; issues?: ErrorIssue[]; cause?: unknown; headers?: Record<string, string> } = {},
  ) {
    const [status, publicMessage] = ERRORS[code];
    super({ code: TRPC_CODE_BY_STATUS[status] ?? "INTERNAL_SERVER_ERROR", message: options.message ?? publicMessage, cause: options.cause });
    this.name = "AuthError";
    this.authCode = code;
    this.status = status;
    this.issues = options.issues;
    this.headers = options.headers;
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
    return { code: err.authCode, message: ERRORS[err.authCode][1], ...(requestId ? { requestId } : {}) };
  }
  return { code: err.authCode, message: err.message, ...(err.issues ? { issues: err.issues } : {}) };
}
