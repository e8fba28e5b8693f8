import { z } from "zod";

/** The `twoFactor` section of the config (src/config/schema.ts). */
export const twoFactorConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** Issuer in the `otpauth://` URI (the name authenticator apps show). */
    issuer: z.string().min(1).max(128).default("Portcullis"),
    /** Email one-time codes as a second factor (mailed over SMTP, or to the log). */
    otp: z.object({ enabled: z.boolean().default(true) }).strict().prefault({}),
    /** Ask OAuth sign-ins for the second factor too (better-auth does not). */
    enforceOnSocial: z.boolean().default(false),
    /** Ask no second factor after a magic link or a mailed sign-in code (better-auth asks none; Portcullis does by default). */
    skipForPasswordless: z.boolean().default(false),
  })
  .strict()
  .prefault({});
