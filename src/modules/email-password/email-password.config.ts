import { z } from "zod";

/** The `emailAndPassword` section of the config (src/config/schema.ts). */
export const emailAndPasswordConfig = z
  .object({
    /** POST /sign-up/email; off: 403 EMAIL_PASSWORD_SIGN_UP_DISABLED. */
    enableSignup: z.boolean().default(true),
    /** Refuse password sign-in (403 EMAIL_NOT_VERIFIED) until the email is verified; sign-up then mails a link. */
    requireEmailVerification: z.boolean().default(false),
    /** Shortest password accepted (400 PASSWORD_TOO_SHORT). */
    passwordMinLength: z.number().int().min(1).max(128).default(8),
    /** Longest password accepted (400 PASSWORD_TOO_LONG). */
    passwordMaxLength: z.number().int().min(8).max(1024).default(128),
    /** Lifetime of a password reset link. */
    resetPasswordTokenExpiresInSec: z.number().int().positive().default(3600),
  })
  .strict()
  .prefault({});
