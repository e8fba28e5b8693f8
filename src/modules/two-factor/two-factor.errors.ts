import type { ErrorTable } from "../../error-table.ts";

/**
 * Two-factor (better-auth's two-factor plugin codes). Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const twoFactorErrors = {
  // 400
  OTP_HAS_EXPIRED: [400, "OTP has expired"],
  OTP_NOT_CONFIGURED: [400, "otp isn't configured"],
  TOTP_NOT_ENABLED: [400, "TOTP not enabled"],
  TWO_FACTOR_NOT_ENABLED: [400, "Two factor isn't enabled"],
  BACKUP_CODES_NOT_ENABLED: [400, "Backup codes aren't enabled"],
  TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE: [400, "Too many attempts. Please request a new code."],
  // 401
  INVALID_CODE: [401, "Invalid code"],
  INVALID_BACKUP_CODE: [401, "Invalid backup code"],
  INVALID_TWO_FACTOR_COOKIE: [401, "Invalid two factor cookie"],
  // 429
  ACCOUNT_TEMPORARILY_LOCKED: [429, "Too many failed verification attempts. Your account is temporarily locked. Please try again later."],
} as const satisfies ErrorTable;
