import { z } from "zod";

/** The `emailVerification` section of the config (src/config/schema.ts). */
export const emailVerificationConfig = z
  .object({
    /** Lifetime of an email verification link. */
    tokenExpiresInSec: z.number().int().positive().default(3600),
    /** Mail a verification link on sign-up; unset follows emailAndPassword.requireEmailVerification. */
    sendOnSignUp: z.boolean().optional(),
  })
  .strict()
  .prefault({});
