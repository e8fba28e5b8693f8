import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import { successTrue, twoFactorRedirect, userRecord } from "../../openapi/records.ts";

const switchable = true;
const codeErrors = ["INVALID_EMAIL", "INVALID_OTP", "OTP_EXPIRED", "TOO_MANY_ATTEMPTS"] as const;

/** OpenAPI docs of email-otp.router.ts (src/openapi/doc.ts): better-auth's email-otp plugin shapes. */
export const emailOtpDoc = moduleDoc({
  tag: "Email one-time codes",
  description:
    "Sign in, verify an address or reset a password with a code mailed to the address (docs/passwordless.md). " +
    "A code has `emailOTP.otpLength` digits (6), lives `emailOTP.expiresIn` seconds (300), allows `emailOTP.allowedAttempts` tries (3) and works once; " +
    "a new send replaces the address's code of that type. Off (404) unless `emailOTP.enabled`.",
  operations: {
    "emailOtp.sendVerificationOtp": {
      summary: "Mail a one-time code",
      description:
        "The same answer, in the same time, whether or not the address has an account; the code goes out after the answer " +
        "(sign-in: to any address unless `emailOTP.disableSignUp`; email-verification: to an unverified account; forget-password: to an account).",
      access: "sign-in",
      switchable,
      output: successTrue,
      errors: ["INVALID_EMAIL"],
    },
    "emailOtp.checkVerificationOtp": {
      summary: "Check a code without using it up",
      description: "Spends one of the code's tries.",
      access: "public",
      switchable,
      output: successTrue,
      errors: [...codeErrors],
    },
    "emailOtp.verifyEmail": {
      summary: "Verify the address with a code",
      description: "No new session; a request carrying the user's own session cookie gets it again.",
      access: "public",
      switchable,
      output: z.object({ status: z.literal(true), token: z.null(), user: userRecord }),
      errors: [...codeErrors],
    },
    "signIn.emailOtp": {
      summary: "Sign in with a code",
      description:
        "Creates the account on a first sign-in unless `emailOTP.disableSignUp`; verifies the address (an unproven account is taken over: docs/security.md). " +
        "A session (`token`, cookie, `set-auth-token`), or `twoFactorRedirect` for a user with two-factor on (unless `twoFactor.skipForPasswordless`).",
      access: "sign-in",
      switchable,
      output: z.union([z.object({ token: z.string().nullable(), user: userRecord }), twoFactorRedirect]),
      errors: [...codeErrors, "BANNED_USER"],
    },
    "emailOtp.requestPasswordReset": {
      summary: "Mail a password reset code",
      description: "The same answer, in the same time, whether or not the address has an account.",
      access: "sign-in",
      switchable,
      output: successTrue,
      errors: ["INVALID_EMAIL"],
    },
    "forgetPassword.emailOtp": {
      summary: "Mail a password reset code (older name)",
      description: "better-auth's deprecated name of /email-otp/request-password-reset.",
      access: "sign-in",
      switchable,
      output: successTrue,
      errors: ["INVALID_EMAIL"],
    },
    "emailOtp.resetPassword": {
      summary: "Set a new password with a code",
      description: "Ends every session of the user; verifies an unverified address (taking an unproven account over).",
      access: "sign-in",
      switchable,
      output: successTrue,
      errors: [...codeErrors, "PASSWORD_TOO_SHORT", "PASSWORD_TOO_LONG"],
    },
  },
});
