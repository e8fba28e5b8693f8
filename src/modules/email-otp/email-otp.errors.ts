import type { ErrorTable } from "../../error-table.ts";

/**
 * Email one-time codes (better-auth's email-otp plugin codes). Codes are part of the wire
 * contract: add new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const emailOtpErrors = {
  // 400
  INVALID_OTP: [400, "Invalid OTP"],
  OTP_EXPIRED: [400, "OTP expired"],
  // 403
  TOO_MANY_ATTEMPTS: [403, "Too many attempts"],
} as const satisfies ErrorTable;
