import { z } from "zod";

/** The `apiKey` section of the config (src/config/schema.ts): better-auth's api-key plugin options, its names and units (docs/machine-access.md). */
export const apiKeyConfig = z
  .object({
    /** The /api-key/* and admin API-key routes, and keys as principals. Off: those routes answer 404 and the key header is ignored. */
    enabled: z.boolean().default(true),
    /** Headers a key is read from, the first one present wins (better-auth's `apiKeyHeaders`, lower case). */
    apiKeyHeaders: z.array(z.string().regex(/^[a-z0-9-]{1,64}$/)).min(1).max(8).default(["x-api-key"]),
    /** A request with a key acts as its owner (better-auth's default is false; keys exist to call this server). */
    enableSessionForAPIKeys: z.boolean().default(true),
    /** Prefix of new keys (secret scanners match on it). */
    defaultPrefix: z.string().regex(/^[a-zA-Z0-9_-]{1,32}$/).default("pc_"),
    /** Random bytes of a key, base64url (32 bytes = 43 characters). */
    defaultKeyLength: z.number().int().min(32).max(128).default(32),
    /** Longest `prefix` a caller may ask for. */
    maximumPrefixLength: z.number().int().min(1).max(32).default(32),
    /** Longest `name`. */
    maximumNameLength: z.number().int().min(1).max(255).default(32),
    /** `metadata` on keys (better-auth: off by default; sent while off: 400 METADATA_DISABLED). */
    enableMetadata: z.boolean().default(false),
    keyExpiration: z
      .object({
        /** Seconds; null: keys never expire unless created with `expiresIn`. */
        defaultExpiresIn: z.number().int().min(1).nullable().default(null),
        /** Days. */
        minExpiresIn: z.number().min(0).default(1),
        /** Days. */
        maxExpiresIn: z.number().min(0).default(365),
      })
      .strict()
      .prefault({}),
    /** The per-key rate limit new keys get (better-auth's defaults: 10 requests a day). */
    rateLimit: z
      .object({
        /** New keys are rate limited (a key's own `rateLimitEnabled` says for each). */
        enabled: z.boolean().default(true),
        /** Milliseconds. */
        timeWindow: z.number().int().min(1).default(24 * 3600 * 1000),
        /** Requests a key may make per window. */
        maxRequests: z.number().int().min(1).default(10),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});
