import proxyAddr from "proxy-addr";
import { z } from "zod";
import { httpConfigSchema, providersSchema } from "../social-providers/config.ts";
import { systemClock, type Clock } from "../core/clock.ts";
import { sessionConfig } from "../core/session/session.config.ts";
import { emailConfig } from "../mail/mail.config.ts";
import { metricsConfig } from "../metrics/metrics.config.ts";
import { adminConfig } from "../modules/admin/admin.config.ts";
import { jwtConfig } from "../modules/jwt/jwt.config.ts";
import { apiKeyConfig } from "../modules/api-key/api-key.config.ts";
import { deviceAuthorizationConfig } from "../modules/device/device.config.ts";
import { emailAndPasswordConfig } from "../modules/email-password/email-password.config.ts";
import { accountConfig, trustedProvidersConfig } from "../modules/oauth/oauth.config.ts";
import { sweeperConfig } from "../modules/maintenance/maintenance.config.ts";
import { passkeyConfig } from "../modules/passkey/passkey.config.ts";
import { twoFactorConfig } from "../modules/two-factor/two-factor.config.ts";
import { userConfig } from "../modules/user/user.config.ts";
import { emailVerificationConfig } from "../modules/verification/verification.config.ts";
import { rateLimitConfig } from "../rate-limit/rate-limit.config.ts";
import { magicLinkConfig } from "../modules/magic-link/magic-link.config.ts";
import { emailOtpConfig } from "../modules/email-otp/email-otp.config.ts";
import { oidcProviderConfig } from "../modules/oidc-provider/oidc-provider.config.ts";
import { organizationConfig } from "../modules/organization/organization.config.ts";

export { DEFAULT_RATE_LIMIT_RULES } from "../rate-limit/rate-limit.config.ts";

/** A `trustProxy` list is what proxy-addr accepts: IPs, CIDRs, or its names (loopback, linklocal, uniquelocal). */
function compilesAsProxyList(list: string[]): boolean {
  try {
    proxyAddr.compile(list);
    return true;
  } catch {
    return false;
  }
}

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
    session: sessionConfig,
    emailAndPassword: emailAndPasswordConfig,
    /** Outgoing mail (docs/email.md): the `send` hook, else SMTP, else the log (outside production, or with `logLinks`). */
    email: emailConfig,
    emailVerification: emailVerificationConfig,
    rateLimit: rateLimitConfig,
    /** Account self-service (docs/wire-contract.md §9), better-auth's `user` options. */
    user: userConfig,
    /** Two-factor authentication (better-auth's two-factor plugin shapes); users still choose to enroll. */
    twoFactor: twoFactorConfig,
    /** Passkeys (WebAuthn, better-auth's passkey plugin shapes). rpID and origins default from publicUrl. */
    passkey: passkeyConfig,
    /** Device authorization grant (RFC 8628). */
    deviceAuthorization: deviceAuthorizationConfig,
    /** Admin: roles and permissions, bans, impersonation (docs/wire-contract.md §6). */
    admin: adminConfig,
    /** JWTs for other services (docs/machine-access.md): GET /token, GET /jwks, `set-auth-jwt` (better-auth's jwt plugin shapes). */
    jwt: jwtConfig,
    /** API keys for scripts and integrations (docs/machine-access.md): /api-key/*, the key header as a principal (better-auth's api-key plugin shapes). */
    apiKey: apiKeyConfig,
    /** The admin console, a web app at `/admin` on the typed client (console/, rest-bridge/console.ts). */
    adminConsole: z
      .object({
        /** Serve `/admin`. Unset: on, except when `NODE_ENV=production` (then only when set to true). */
        enabled: z.boolean().optional(),
      })
      .strict()
      .transform((c) => ({ enabled: c.enabled ?? process.env.NODE_ENV !== "production" }))
      .prefault({}),
    /** OAuth 2.0 social sign-in (docs/wire-contract.md §5): name → provider; the name is the `{provider}` path segment. */
    providers: providersSchema,
    /** Providers whose emails count as verified even when they do not say so (account linking by email). */
    trustedProviders: trustedProvidersConfig,
    /** Social accounts (better-auth's `account` options). */
    account: accountConfig,
    /** Outgoing HTTP to providers: timeouts, response size cap, injectable undici dispatcher. */
    http: httpConfigSchema,
    /** Deletes expired sessions, verification records, device codes, two-factor challenges, email codes and rate-limit rows (src/modules/maintenance). */
    sweeper: sweeperConfig,
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
    metrics: metricsConfig,
    /** Magic sign-in links (better-auth's magic-link plugin shapes, docs/passwordless.md). */
    magicLink: magicLinkConfig,
    /** Email one-time codes for sign-in, verification and password reset (better-auth's email-otp plugin shapes, docs/passwordless.md). */
    emailOTP: emailOtpConfig,
    /** Portcullis as an OpenID provider (docs/oidc-provider.md): discovery, /oauth2/*, the sign-in and consent pages. */
    oidcProvider: oidcProviderConfig,
    /** Organizations, members, roles, invitations and teams (better-auth's organization plugin shapes, docs/organizations.md). */
    organization: organizationConfig,
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
