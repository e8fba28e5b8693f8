import { z } from "zod";

/** The `emailOTP` section of the config (src/config/schema.ts): better-auth's emailOTP options that Portcullis keeps. */
export const emailOtpConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** Digits of a code. */
    otpLength: z.number().int().min(4).max(12).default(6),
    /** Seconds a code stays valid. */
    expiresIn: z.number().int().positive().max(3600).default(300),
    /** Tries a code allows (right or wrong); the next one answers 403 TOO_MANY_ATTEMPTS until a new code is sent. */
    allowedAttempts: z.number().int().min(1).max(10).default(3),
    /** Sign-in codes create no account: an address without one gets no code, and its sign-in answers INVALID_OTP. */
    disableSignUp: z.boolean().default(false),
    /** Every verification mail (sign-up, sign-in of an unverified user, send-verification-email, a changed address) carries a code instead of a link. */
    overrideDefaultEmailVerification: z.boolean().default(false),
  })
  .strict()
  .prefault({});
