import { TRPCError } from "@trpc/server";
import type { TRPC_ERROR_CODE_KEY } from "@trpc/server/rpc";
import { coreErrors } from "./core/errors.ts";
import type { ErrorTable } from "./error-table.ts";
import { adminErrors } from "./modules/admin/admin.errors.ts";
import { deviceErrors } from "./modules/device/device.errors.ts";
import { emailPasswordErrors } from "./modules/email-password/email-password.errors.ts";
import { maintenanceErrors } from "./modules/maintenance/maintenance.errors.ts";
import { oauthErrors } from "./modules/oauth/oauth.errors.ts";
import { passkeyErrors } from "./modules/passkey/passkey.errors.ts";
import { twoFactorErrors } from "./modules/two-factor/two-factor.errors.ts";
import { userErrors } from "./modules/user/user.errors.ts";
import { verificationErrors } from "./modules/verification/verification.errors.ts";
import { magicLinkErrors } from "./modules/magic-link/magic-link.errors.ts";
import { emailOtpErrors } from "./modules/email-otp/email-otp.errors.ts";
import { apiKeyErrors } from "./modules/api-key/api-key.errors.ts";
import { oidcProviderErrors } from "./modules/oidc-provider/oidc-provider.errors.ts";
import { organizationErrors } from "./modules/organization/organization.errors.ts";

/*
 * One error type, one table (docs/architecture.md "Style" 2). Services throw `new AuthError(code)`;
 * the tRPC error formatter and the REST bridge both read status and public message from here.
 * The table is composed from the kernel's codes and each family's (their `*.errors.ts`, leaf
 * files); a code declared twice does not compile (Duplicates) and fails at start (composeErrors).
 * Codes are part of the wire contract: add new ones, never rename.
 */

type Duplicates<T extends readonly ErrorTable[]> = {
  [I in keyof T]: { [J in keyof T]: I extends J ? never : keyof T[I] & keyof T[J] }[number];
}[number];
type Merged<T extends readonly ErrorTable[]> = (T[number] extends infer U ? (U extends unknown ? (x: U) => void : never) : never) extends (x: infer I) => void
  ? I
  : never;

/** The tables as one; `{ duplicateCodes }` in the type error names a code two tables declare. */
export function composeErrors<const T extends readonly ErrorTable[]>(...tables: T & ([Duplicates<T>] extends [never] ? unknown : { duplicateCodes: Duplicates<T> })): Merged<T> {
  const all: Record<string, ErrorTable[string]> = {};
  for (const table of tables as readonly ErrorTable[]) {
    for (const [code, entry] of Object.entries(table)) {
      if (Object.hasOwn(all, code)) throw new Error(`error code ${code} is declared twice`);
      all[code] = entry;
    }
  }
  return all as Merged<T>;
}

/** In the order docs/errors.md lists them. */
export const ERROR_TABLES = {
  kernel: coreErrors,
  "email-password": emailPasswordErrors,
  user: userErrors,
  verification: verificationErrors,
  oauth: oauthErrors,
  "two-factor": twoFactorErrors,
  passkey: passkeyErrors,
  device: deviceErrors,
  admin: adminErrors,
  maintenance: maintenanceErrors,
  "magic-link": magicLinkErrors,
  "email-otp": emailOtpErrors,
  "api-key": apiKeyErrors,
  "oidc-provider": oidcProviderErrors,
  organization: organizationErrors,
} as const;

export const ERRORS = composeErrors(
  coreErrors,
  emailPasswordErrors,
  userErrors,
  verificationErrors,
  oauthErrors,
  twoFactorErrors,
  passkeyErrors,
  deviceErrors,
  adminErrors,
  maintenanceErrors,
  magicLinkErrors,
  emailOtpErrors,
  apiKeyErrors,
  oidcProviderErrors,
  organizationErrors,
);

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
  constructor(code: ErrorCode, description: string, error: string, headers?: Record<string, string>);
  constructor(code: ErrorCode, description?: string, error: string = code.toLowerCase(), headers?: Record<string, string>) {
    super(code, { ...(description === undefined ? {} : { message: description }), ...(headers ? { headers } : {}) });
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
