import { z } from "zod";

/** The `user` section of the config (src/config/schema.ts). */
export const userConfig = z
  .object({
    /** POST /change-email. Off: 400 CHANGE_EMAIL_DISABLED (better-auth's answer). */
    changeEmail: z.object({ enabled: z.boolean().default(false) }).strict().prefault({}),
    /** POST /delete-user and GET /delete-user/callback. Off: 404 NOT_FOUND. */
    deleteUser: z
      .object({
        enabled: z.boolean().default(false),
        /** Lifetime of the mailed confirmation link (better-auth's deleteTokenExpiresIn: 1 day). */
        tokenExpiresInSec: z.number().int().positive().max(7 * 24 * 3600).default(24 * 3600),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});
