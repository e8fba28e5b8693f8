import { z } from "zod";

/** "localhost:3000" parses as a URL with scheme "localhost:" (origin "null"): require http(s). */
const httpUrl = z.string().refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), "must be an absolute http(s) URL");

/** The `passkey` section of the config (src/config/schema.ts). */
export const passkeyConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** WebAuthn relying-party id; default: the host of `publicUrl`. */
    rpID: z.string().min(1).max(253).optional(),
    /** Name the authenticator shows. */
    rpName: z.string().min(1).max(128).default("Portcullis"),
    /** Origins a passkey ceremony may come from; default: the origin of `publicUrl`. */
    origins: z.array(httpUrl).min(1).optional(),
  })
  .strict()
  .prefault({});
