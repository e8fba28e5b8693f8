import { z } from "zod";

export const rateLimitRule = z.union([
  z.object({ window: z.number().int().positive(), max: z.number().int().positive() }).strict(),
  z.literal(false),
]);

/** docs/wire-contract.md §8 defaults: sign-in, sign-up, change-password 3/10 s; reset, verification 3/60 s; the plugins' own. */
export const DEFAULT_RATE_LIMIT_RULES: Record<string, { window: number; max: number }> = {
  "/sign-in/*": { window: 10, max: 3 },
  "/sign-up/*": { window: 10, max: 3 },
  "/change-password": { window: 10, max: 3 },
  "/verify-password": { window: 10, max: 3 },
  "/change-email": { window: 60, max: 3 },
  "/request-password-reset": { window: 60, max: 3 },
  "/send-verification-email": { window: 60, max: 3 },
  // better-auth's two-factor plugin: 3 per 10 s on every /two-factor/ path (codes are guessable).
  "/two-factor/*": { window: 10, max: 3 },
  // better-auth's magic-link plugin: 5 per 60 s on the send and the verify paths.
  "/sign-in/magic-link": { window: 60, max: 5 },
  "/magic-link/verify": { window: 60, max: 5 },
  // better-auth's email-otp plugin: 3 per 60 s on each of its paths (codes are guessable).
  "/sign-in/email-otp": { window: 60, max: 3 },
  "/email-otp/*": { window: 60, max: 3 },
  "/forget-password/email-otp": { window: 60, max: 3 },
  // RFC 7591 open registration: each call stores a client (docs/oidc-provider.md "Registration").
  "/oauth2/register": { window: 60, max: 5 },
};

/** The `rateLimit` section of the config (src/config/schema.ts). */
export const rateLimitConfig = z
  .object({
    /** Per-IP rate limits on every route (`false` in tests and benches only). */
    enabled: z.boolean().default(true),
    /** Default window, in seconds, of a path without a rule. */
    window: z.number().int().positive().default(10),
    /** Requests per window per IP of a path without a rule. */
    max: z.number().int().positive().default(100),
    /** Per-path rules, e.g. `{ "/sign-in/*": { window: 10, max: 3 } }` (`false` turns one off); merged over the built-in ones for sign-in, sign-up, reset and verification mails. */
    rules: z.record(z.string().startsWith("/"), rateLimitRule).default({}),
    /**
     * `memory`: counts per process. `database`: the `rate_limits` table, shared by every
     * instance on the database. `redis`: a Redis server (`redisUrl`), shared by every
     * instance that names it. A shared store that fails falls back to per-instance memory
     * counts (logged). Default: `database` on PostgreSQL (multi-instance deployments), else `memory`.
     */
    storage: z.enum(["memory", "database", "redis"]).optional(),
    /** `redis://` or `rediss://` URL of the Redis server for `storage: "redis"` (env REDIS_URL). */
    redisUrl: z.string().refine((v) => URL.canParse(v) && /^rediss?:$/.test(new URL(v).protocol), "must be a redis:// or rediss:// URL").optional(),
    /** Put before every Redis key of the counters, so a Redis shared with other apps keeps them apart (`""`: none). */
    redisKeyPrefix: z.string().max(64).default("portcullis:"),
    /**
     * Password-reset, verification, magic-link and one-time-code mails per normalised address
     * and purpose, whatever the client IP (src/rate-limit/address-limit.ts); `false` turns it off.
     */
    perAddress: rateLimitRule.default({ window: 15 * 60, max: 3 }),
  })
  .strict()
  .refine((r) => r.storage !== "redis" || r.redisUrl !== undefined, { message: "storage redis needs redisUrl (or REDIS_URL)", path: ["redisUrl"] })
  .prefault({});
