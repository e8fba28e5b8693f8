import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { statusTrue, userRecord } from "../../openapi/records.ts";

const verified = z.object({ token: z.string(), user: userRecord });
/** Failures of a second-factor check (verification.service.ts, challenges.ts). */
const CHECK = ["INVALID_TWO_FACTOR_COOKIE", "ACCOUNT_TEMPORARILY_LOCKED", "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE"] as const;
const switchable = true;

/** OpenAPI docs of two-factor.router.ts (src/openapi/doc.ts): better-auth's two-factor plugin shapes. */
export const twoFactorDoc = moduleDoc({
  tag: "Two-factor",
  description:
    "TOTP, mailed one-time codes and backup codes. Enrolment needs the user's own session and password; the verify routes finish a " +
    "sign-in held by `twoFactorRedirect` (its pending cookie) or, with a session, confirm an enrolment. Off (404) unless `twoFactor.enabled`.",
  operations: {
    "twoFactor.enable": {
      summary: "Enrol: a new TOTP secret and backup codes",
      description: "Two-factor turns on with the first verified TOTP code.",
      access: "own-session",
      switchable,
      output: z.object({ totpURI: z.string(), backupCodes: z.array(z.string()) }),
      errors: ["INVALID_PASSWORD"],
    },
    "twoFactor.disable": { summary: "Turn two-factor off", access: "own-session", switchable, output: statusTrue, errors: ["INVALID_PASSWORD"] },
    "twoFactor.getTotpUri": {
      summary: "The enrolment's otpauth:// URI",
      access: "own-session",
      switchable,
      output: z.object({ totpURI: z.string() }),
      errors: ["TOTP_NOT_ENABLED", "INVALID_PASSWORD"],
    },
    "twoFactor.generateBackupCodes": {
      summary: "New backup codes (the old ones stop working)",
      access: "own-session",
      switchable,
      output: z.object({ status: z.literal(true), backupCodes: z.array(z.string()) }),
      errors: ["TWO_FACTOR_NOT_ENABLED", "INVALID_PASSWORD"],
    },
    "twoFactor.verifyTotp": {
      summary: "Verify a TOTP code",
      access: "optional",
      switchable,
      output: verified,
      errors: ["TOTP_NOT_ENABLED", "IMPERSONATION_NOT_ALLOWED", "INVALID_CODE", ...CHECK],
    },
    "twoFactor.sendOtp": {
      summary: "Mail a one-time code",
      access: "optional",
      switchable,
      output: statusTrue,
      errors: ["OTP_NOT_CONFIGURED", "TWO_FACTOR_NOT_ENABLED", "INVALID_TWO_FACTOR_COOKIE"],
    },
    "twoFactor.verifyOtp": {
      summary: "Verify a mailed one-time code",
      access: "optional",
      switchable,
      output: verified,
      errors: ["OTP_NOT_CONFIGURED", "OTP_HAS_EXPIRED", "IMPERSONATION_NOT_ALLOWED", "INVALID_CODE", ...CHECK],
    },
    "twoFactor.verifyBackupCode": {
      summary: "Verify a backup code",
      access: "optional",
      switchable,
      output: verified,
      errors: ["BACKUP_CODES_NOT_ENABLED", "INVALID_BACKUP_CODE", ...CHECK],
    },
    "admin.resetTwoFactor": {
      summary: "Turn a user's two-factor off (admin)",
      description: "For a user who lost their authenticator: enrollment, backup codes and trusted devices are forgotten. Not switched off with `twoFactor.enabled`.",
      access: "own-session",
      output: z.object({ success: z.literal(true) }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD"],
      errors: ["USER_NOT_FOUND"],
    },
  },
});
