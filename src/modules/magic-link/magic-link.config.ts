import { z } from "zod";

/** The `magicLink` section of the config (src/config/schema.ts): better-auth's magicLink options that Portcullis keeps. */
export const magicLinkConfig = z
  .object({
    enabled: z.boolean().default(true),
    /** Seconds a link stays valid. */
    expiresIn: z.number().int().positive().max(86_400).default(300),
    /** Links create no account: an address without one gets no link (a link of a deleted account answers new_user_signup_disabled). */
    disableSignUp: z.boolean().default(false),
    /**
     * A browser opening the link gets a page whose button signs in (a POST), so a mail scanner that
     * fetches links does not use it up; false: better-auth's one-click GET.
     */
    confirmPage: z.boolean().default(true),
  })
  .strict()
  .prefault({});
