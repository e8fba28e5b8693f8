import { z } from "zod";

const urlString = z.string().refine((v) => URL.canParse(v), "must be an absolute URL");

/** The `deviceAuthorization` section of the config (src/config/schema.ts). */
export const deviceAuthorizationConfig = z
  .object({
    /** Lifetime of a device code and its user code. */
    expiresInSec: z.number().int().positive().max(24 * 3600).default(1800),
    /** Polling interval the device is told (faster polling: slow_down). */
    intervalSec: z.number().int().positive().max(300).default(5),
    /** Where users enter the code; default `{publicUrl}/device`. */
    verificationUri: urlString.optional(),
    /** Optional sign-in page linked from the built-in /device page (it has its own form too). */
    signInUrl: urlString.optional(),
    /** Answers false for an unknown client_id (400 invalid_client); may be async. */
    validateClient: z
      .custom<(clientId: string) => boolean | Promise<boolean>>((v) => typeof v === "function", "must be a function")
      .optional(),
  })
  .strict()
  .prefault({});
