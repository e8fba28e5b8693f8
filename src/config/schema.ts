import { z } from "zod";

export interface Clock {
  now(): Date;
}

export const systemClock: Clock = { now: () => new Date() };

const rateLimitRule = z.union([
  z.object({ window: z.number().int().positive(), max: z.number().int().positive() }).strict(),
  z.literal(false),
]);

/** CONTRACT.md section 8 defaults: sign-in, sign-up, change-password 3/10 s; reset, verification 3/60 s. */
export const DEFAULT_RATE_LIMIT_RULES: Record<string, { window: number; max: number }> = {
  "/sign-in/*": { window: 10, max: 3 },
  "/sign-up/*": { window: 10, max: 3 },
  "/change-password": { window: 10, max: 3 },
  "/request-password-reset": { window: 60, max: 3 },
  "/send-verification-email": { window: 60, max: 3 },
};

const urlString = z.string().refine((v) => URL.canParse(v), "must be an absolute URL");

export const configSchema = z
  .object({
    /** Public origin of the service; links and the CSRF check use it. */
    publicUrl: urlString.default("http://127.0.0.1:3000"),
    host: z.string().min(1).default("127.0.0.1"),
    port: z.number().int().min(0).max(65535).default(3000),
    basePath: z
      .string()
      .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, "must start with / and not end with /")
      .default("/api/auth"),
    /** `sqlite:<file>` or `postgres://...` */
    databaseUrl: z
      .string()
      .refine((v) => v.startsWith("sqlite:") || /^postgres(ql)?:\/\//.test(v), "must be sqlite:<file> or postgres://...")
      .default("sqlite:./data/portcullis.db"),
    /** Service secret (32+ chars); keys for encryption at rest derive from it. */
    secret: z.string().min(32, "must be at least 32 characters").optional(),
    trustedOrigins: z.array(urlString).default([]),
    cookiePrefix: z.string().regex(/^[A-Za-z0-9_.-]+$/).default("portcullis"),
    session: z
      .object({
        expiresInSec: z.number().int().positive().default(7 * 24 * 3600),
        updateAgeSec: z.number().int().nonnegative().default(24 * 3600),
        shortExpiresInSec: z.number().int().positive().default(24 * 3600),
        /**
         * In-process session cache TTL. Default: 1000 on SQLite, 0 (off) on PostgreSQL, where
         * several instances share the database and a revoke on one must be seen at once by all.
         */
        cacheTtlMs: z.number().int().min(0).max(60_000).optional(),
      })
      .strict()
      .prefault({}),
    emailAndPassword: z
      .object({
        enableSignup: z.boolean().default(true),
        requireEmailVerification: z.boolean().default(false),
        passwordMinLength: z.number().int().min(1).max(128).default(8),
        passwordMaxLength: z.number().int().min(8).max(1024).default(128),
      })
      .strict()
      .prefault({}),
    rateLimit: z
      .object({
        enabled: z.boolean().default(true),
        window: z.number().int().positive().default(10),
        max: z.number().int().positive().default(100),
        rules: z.record(z.string().startsWith("/"), rateLimitRule).default({}),
        storage: z.enum(["memory", "database"]).default("memory"),
      })
      .strict()
      .prefault({}),
    /** Honour X-Forwarded-For for the client IP (only behind a proxy you control). */
    trustProxy: z.boolean().default(false),
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    clock: z.custom<Clock>((v) => typeof (v as Clock | undefined)?.now === "function", "must have now()").default(systemClock),
  })
  .strict();

export type PortcullisConfig = z.input<typeof configSchema>;
export type ResolvedConfig = z.output<typeof configSchema>;

/** Types the config module's default export. */
export function defineConfig(config: PortcullisConfig): PortcullisConfig {
  return config;
}
