import { z } from "zod";

/** The `trustedProviders` key of the config (src/config/schema.ts). */
export const trustedProvidersConfig = z.array(z.string().min(1)).default([]);

/** The `account` section of the config (src/config/schema.ts). */
export const accountConfig = z
  .object({
    /**
     * Accept an OAuth callback without the state cookie of the browser that started the flow
     * (native apps that start in one context and finish in the system browser). Off: turning
     * it on reopens login and linking CSRF with a leaked callback URL (docs/providers.md).
     */
    skipStateCookieCheck: z.boolean().default(false),
  })
  .strict()
  .prefault({});
