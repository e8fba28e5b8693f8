import proxyAddr from "proxy-addr";
import { z } from "zod";
import { roleGrantsSchema, withBuiltInRoles } from "../core/permissions.ts";
import { httpConfigSchema, providersSchema } from "../social-providers/config.ts";
import type { MailSendHook, MailTemplate } from "../mail/types.ts";
import { systemClock, type Clock } from "../core/clock.ts";


/** A `trustProxy` list is what proxy-addr accepts: IPs, CIDRs, or its names (loopback, linklocal, uniquelocal). */
function compilesAsProxyList(list: string[]): boolean {
  try {
    proxyAddr.compile(list);
    return true;
  } catch {
    return false;
  }
}

const rateLimitRule = z.union([
  z.object({ window: z.number().int().positive(), max: z.number().int().positive() }).strict(),
  z.literal(false),
]);

/** CONTRACT.md section 8 defaults: sign-in, sign-up, change-password 3/10 s; reset, verification 3/60 s. */
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
};

/** One `email.templates` entry: a function, checked when it runs (src/mail/mailer.ts). */
const mailTemplate = z.custom<MailTemplate>((v) => typeof v === "function", "must be a function").optional();

const urlString = z.string().refine((v) => URL.canParse(v), "must be an absolute URL");
/** "localhost:3000" parses as a URL with scheme "localhost:" (origin "null"): require http(s). */
const httpUrl = z.string().refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), "must be an absolute http(s) URL");

export const configSchema = z
  .object({
    /** Public origin of the service; links and the CSRF check use it. */
    publicUrl: httpUrl.default("http://127.0.0.1:3000"),
    /** Address `serve` listens on (`0.0.0.0` for every interface). */
    host: z.string().min(1).default("127.0.0.1"),
    /** Port `serve` listens on (0: any free port). Without `publicUrl`, the public URL follows it. */
    port: z.number().int().min(0).max(65535).default(3000),
    /** Prefix of the REST bridge (better-auth's `basePath`); tRPC stays at `/api/trpc`. */
    basePath: z
      .string()
      .regex(/^\/[A-Za-z0-9/_-]*[A-Za-z0-9_-]$/, "must start with / and not end with /")
      .default("/api/auth"),
    /** `sqlite:<file>` or `postgres://...` */
    databaseUrl: z
      .string()
      .refine((v) => v.startsWith("sqlite:") || /^postgres(ql)?:\/\//.test(v), "must be sqlite:<file> or postgres://...")
      .default("sqlite:./data/portcullis.db"),
    /** Service secret (32+ chars); keys for encryption at rest derive from it. Shorthand for `secrets: [secret]`. */
    secret: z.string().min(32, "must be at least 32 characters").optional(),
    /**
     * Secrets newest first (rotation: docs/configuration.md): the first seals and signs, every one still opens
     * and verifies. Set `secret` or `secrets`, not both.
     */
    secrets: z
      .array(z.string().min(32, "must be at least 32 characters"))
      .min(1, "needs at least one secret")
      .max(16)
      .refine((list) => new Set(list).size === list.length, "lists a secret twice")
      .optional(),
    /** Other origins (browser apps) allowed past the CSRF origin check, as callback URLs, and answered with CORS headers. */
    trustedOrigins: z.array(urlString).default([]),
    /** Cookie names are `<prefix>.session_token` and so on (`__Secure-` prepended on https). */
    cookiePrefix: z.string().regex(/^[A-Za-z0-9_.-]+$/).default("portcullis"),
    session: z
      .object({
        /** Session lifetime, slid forward as the session is used. */
        expiresInSec: z.number().int().positive().default(7 * 24 * 3600),
        /** A session is slid forward at most once per this many seconds (a write on a check). */
        updateAgeSec: z.number().int().nonnegative().default(24 * 3600),
        /** Lifetime of a `rememberMe: false` session (a browser-session cookie). */
        shortExpiresInSec: z.number().int().positive().default(24 * 3600),
        /**
         * In-process session cache TTL (0 turns the cache off). Every revoke, ban, sign-out,
         * password or user change evicts at once, here and on every other instance (PostgreSQL
         * LISTEN/NOTIFY, or the cluster's IPC with `serve --workers`); the TTL only bounds what a
         * write from outside the service (a hand-edited row) could leave cached.
         */
        cacheTtlMs: z.number().int().min(0).max(60_000).default(1000),
        /** Sessions the cache holds at most; the least recently used go first. */
        cacheMaxEntries: z.number().int().min(1).max(10_000_000).default(10_000),
        /**
         * A session signed in less than this long ago is "fresh": delete-user needs no password
         * from it (better-auth's `session.freshAge`); 0 treats every session as fresh.
         */
        freshAgeSec: z.number().int().nonnegative().default(24 * 3600),
      })
      .strict()
      .prefault({}),
    emailAndPassword: z
      .object({
        /** POST /sign-up/email; off: 403 EMAIL_PASSWORD_SIGN_UP_DISABLED. */
        enableSignup: z.boolean().default(true),
        /** Refuse password sign-in (403 EMAIL_NOT_VERIFIED) until the email is verified; sign-up then mails a link. */
        requireEmailVerification: z.boolean().default(false),
        /** Shortest password accepted (400 PASSWORD_TOO_SHORT). */
        passwordMinLength: z.number().int().min(1).max(128).default(8),
        /** Longest password accepted (400 PASSWORD_TOO_LONG). */
        passwordMaxLength: z.number().int().min(8).max(1024).default(128),
        /** Lifetime of a password reset link. */
        resetPasswordTokenExpiresInSec: z.number().int().positive().default(3600),
      })
      .strict()
      .prefault({}),
    /** Outgoing mail (docs/email.md): the `send` hook, else SMTP, else the log (outside production, or with `logLinks`). */
    email: z
      .object({
        /** `smtp://user:pass@host:587` or `smtps://...`; without it (and without a send hook) mails go to the log. */
        smtpUrl: z
          .string()
          .refine((v) => /^smtps?:\/\//.test(v) && URL.canParse(v), "must be smtp://... or smtps://...")
          .optional(),
        /** The `From` of every mail. */
        from: z.string().min(1).default("Portcullis <no-reply@localhost>"),
        /**
         * `async ({ kind, to, subject, text, html, url, code, locale }) => {}`: delivers every mail
         * instead of SMTP (a transactional mail API, a queue); a throw counts as a failed send.
         */
        send: z.custom<MailSendHook>((v) => typeof v === "function", "must be a function").optional(),
        /**
         * Per mail kind, `({ to, name, url, code, newEmail, expiresInSec, locale, locales }) => ({ subject, text, html? })`
         * (may be async) in place of the built-in English text; `locale` comes from the request's Accept-Language.
         */
        templates: z
          .object({
            /** The email verification link (sign-up, send-verification-email, a changed address). */
            verification: mailTemplate,
            /** The password reset link. */
            resetPassword: mailTemplate,
            /** change-email of a verified user: the approval link mailed to the current address (`newEmail` set). */
            changeEmail: mailTemplate,
            /** delete-user: the confirmation link. */
            deleteAccount: mailTemplate,
            /** The two-factor sign-in code (`code`, no `url`). */
            twoFactorOtp: mailTemplate,
          })
          .strict()
          .prefault({}),
        /**
         * Write each mail's link or code to the log when there is neither SMTP nor `send`. Unset:
         * on outside production; in production off (the links are live credentials) and such mails fail, logged.
         */
        logLinks: z.boolean().optional(),
      })
      .strict()
      .prefault({}),
    emailVerification: z
      .object({
        /** Lifetime of an email verification link. */
        tokenExpiresInSec: z.number().int().positive().default(3600),
        /** Mail a verification link on sign-up; unset follows emailAndPassword.requireEmailVerification. */
        sendOnSignUp: z.boolean().optional(),
      })
      .strict()
      .prefault({}),
    rateLimit: z
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
         * Password-reset and verification mails per normalised address and purpose, whatever
         * the client IP (src/rate-limit/address-limit.ts); `false` turns it off.
         */
        perAddress: rateLimitRule.default({ window: 15 * 60, max: 3 }),
      })
      .strict()
      .refine((r) => r.storage !== "redis" || r.redisUrl !== undefined, { message: "storage redis needs redisUrl (or REDIS_URL)", path: ["redisUrl"] })
      .prefault({}),
    /** Account self-service (CONTRACT.md §9), better-auth's `user` options. */
    user: z
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
      .prefault({}),
    /** Two-factor authentication (better-auth's two-factor plugin shapes); users still choose to enroll. */
    twoFactor: z
      .object({
        enabled: z.boolean().default(true),
        /** Issuer in the `otpauth://` URI (the name authenticator apps show). */
        issuer: z.string().min(1).max(128).default("Portcullis"),
        /** Email one-time codes as a second factor (mailed over SMTP, or to the log). */
        otp: z.object({ enabled: z.boolean().default(true) }).strict().prefault({}),
        /** Ask OAuth sign-ins for the second factor too (better-auth does not). */
        enforceOnSocial: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /** Passkeys (WebAuthn, better-auth's passkey plugin shapes). rpID and origins default from publicUrl. */
    passkey: z
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
      .prefault({}),
    /** Device authorization grant (RFC 8628). */
    deviceAuthorization: z
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
      .prefault({}),
    /** Admin: roles and permissions, bans, impersonation (CONTRACT.md §6). */
    admin: z
      .object({
        /** Extra roles (or replacements of the built-in `admin` and `user`), e.g. `{ support: { user: ["list", "get"] } }`. */
        roles: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, "role names cannot hold commas or spaces"), roleGrantsSchema).default({}),
        /** Role of users created by sign-up (and create-user without a role). */
        defaultRole: z.string().min(1).default("user"),
        /** Roles whose holders count as admins: impersonating them needs `user: ["impersonate-admins"]`. */
        adminRoles: z.array(z.string().min(1)).min(1).default(["admin"]),
        /** These users hold every permission of the admin roles, whatever their `role` column says. */
        adminUserIds: z.array(z.string().min(1)).default([]),
        /** Lifetime, in seconds, of an impersonation session. */
        impersonationSessionDuration: z.number().int().positive().max(7 * 24 * 3600).default(3600),
        /** The message of 403 BANNED_USER. */
        bannedUserMessage: z.string().min(1).max(1000).default("You have been banned from this application"),
      })
      .strict()
      .transform((admin) => ({ ...admin, roles: withBuiltInRoles(admin.roles) }))
      .superRefine((admin, ctx) => {
        for (const role of [admin.defaultRole, ...admin.adminRoles]) {
          if (!Object.hasOwn(admin.roles, role)) ctx.addIssue({ code: "custom", message: `role "${role}" is not defined in admin.roles` });
        }
      })
      .prefault({}),
    /** The admin console, a web app at `/admin` on the typed client (console/, rest-bridge/console.ts). */
    adminConsole: z
      .object({
        /** Serve `/admin`. Unset: on, except when `NODE_ENV=production` (then only when set to true). */
        enabled: z.boolean().optional(),
      })
      .strict()
      .transform((c) => ({ enabled: c.enabled ?? process.env.NODE_ENV !== "production" }))
      .prefault({}),
    /** OAuth 2.0 social sign-in (CONTRACT.md §5): name → provider; the name is the `{provider}` path segment. */
    providers: providersSchema,
    /** Providers whose emails count as verified even when they do not say so (account linking by email). */
    trustedProviders: z.array(z.string().min(1)).default([]),
    /** Social accounts (better-auth's `account` options). */
    account: z
      .object({
        /**
         * Accept an OAuth callback without the state cookie of the browser that started the flow
         * (native apps that start in one context and finish in the system browser). Off: turning
         * it on reopens login and linking CSRF with a leaked callback URL (docs/providers.md).
         */
        skipStateCookieCheck: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /** Outgoing HTTP to providers: timeouts, response size cap, injectable undici dispatcher. */
    http: httpConfigSchema,
    /** Deletes expired sessions, verification records, device codes and rate-limit rows (src/modules/maintenance). */
    sweeper: z
      .object({
        /** Seconds between sweeps; 0 turns the schedule off. */
        intervalSec: z.number().int().min(0).max(7 * 24 * 3600).default(300),
        /** Rows per delete statement: bounded batches keep transactions and locks short. */
        batchSize: z.number().int().positive().max(100_000).default(500),
        /** Audit events older than this many days are swept (the trail stays bounded); null keeps them forever. */
        auditRetentionDays: z.number().int().positive().max(36_500).nullable().default(365),
      })
      .strict()
      .prefault({}),
    /**
     * Which proxies' X-Forwarded-For to believe for the client IP (rest-bridge/guards.ts):
     * `true` one hop (the reverse proxy in front of us), a number that many hops, a list the
     * proxies' addresses or CIDRs (proxy-addr notation). Never the client's leftmost entry.
     */
    trustProxy: z
      .union([
        z.boolean(),
        z.number().int().min(0).max(32),
        z.array(z.string().min(1)).min(1).refine(compilesAsProxyList, "must be IP addresses or CIDR ranges (e.g. 10.0.0.0/8)"),
      ])
      .default(false),
    /** pino level of the JSON logs (`silent` in tests). */
    logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
    /** Prometheus metrics (src/metrics): requests by route and status, latencies, sign-in outcomes, rate-limit refusals, session cache, mail, database pools. */
    metrics: z
      .object({
        /** Serve GET {path}; off: nothing is counted beyond a few integers and prom-client is never loaded. */
        enabled: z.boolean().default(false),
        /** Where the metrics answer (outside basePath). */
        path: z.string().regex(/^\/[A-Za-z0-9/_.-]*$/, "must be a path starting with /").default("/metrics"),
        /** A port of their own (recommended: keeps them off the public port); unset serves them on the service's port. */
        port: z.number().int().min(0).max(65535).optional(),
        /** Address of that listener; default the service's `host`. */
        host: z.string().min(1).optional(),
        /**
         * A secret scrapers send as `Authorization: Bearer <token>` (env METRICS_TOKEN); set, GET {path} answers 401
         * without it, on either port. Compared in constant time.
         */
        token: z.string().min(32, "must be at least 32 characters").optional(),
        /**
         * Serve them on the service's port without a token even when `NODE_ENV=production`; otherwise production
         * needs `port` or `token` (docs/operations.md, Metrics).
         */
        public: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
    /** Time source (`{ now(): Date }`), for tests that move time. */
    clock: z.custom<Clock>((v) => typeof (v as Clock | undefined)?.now === "function", "must have now()").default(systemClock),
  })
  .strict();

export type PortcullisConfig = z.input<typeof configSchema>;
export type ResolvedConfig = z.output<typeof configSchema>;

/** Types the config module's default export. */
export function defineConfig(config: PortcullisConfig): PortcullisConfig {
  return config;
}
