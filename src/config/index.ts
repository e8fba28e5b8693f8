import { z } from "zod";
import { configSchema, type PortcullisConfig, type ResolvedConfig } from "./schema.ts";

export * from "./schema.ts";
export { systemClock, type Clock } from "../core/clock.ts";

/** One problem of a config: the dotted key ("(root)" for the object itself) and what is wrong with its value. */
export interface ConfigIssue {
  key: string;
  message: string;
  /** The fix, when it is not "set this key to a valid value" (several keys would do). */
  fix?: string;
}

export class ConfigError extends Error {
  override name = "ConfigError";
  /** Each problem apart (the CLI prints one line per issue, naming the environment variable where one set the key). */
  readonly issues: ConfigIssue[];
  constructor(message: string, issues: ConfigIssue[] = []) {
    super(message);
    this.issues = issues;
  }
}

function invalid(issues: ConfigIssue[]): ConfigError {
  return new ConfigError(`Invalid Portcullis config:\n${issues.map((i) => `  ${i.key}: ${i.message}`).join("\n")}`, issues);
}

/** Where `serve` listens, as a URL: the default publicUrl when host or port moved (a wildcard host is reached on loopback). */
function listenUrl(host: string, port: number): string {
  const name = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  return `http://${name}:${port}`;
}

/** Validates the whole config; the message names every bad key. */
export function resolveConfig(input: PortcullisConfig): ResolvedConfig {
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    throw invalid(
      parsed.error.issues.flatMap((i) => {
        // One issue per unknown key, named in full ("rateLimit.maxx"), like every other problem.
        if (i.code === "unrecognized_keys") return i.keys.map((k) => ({ key: [...i.path, k].join("."), message: "is not a known key (a typo, or a key of another version?)" }));
        return [{ key: i.path.length ? i.path.join(".") : "(root)", message: i.message }];
      }),
    );
  }
  if (parsed.data.secret !== undefined && parsed.data.secrets !== undefined) {
    throw invalid([{ key: "secrets", message: "set either secret (one) or secrets (a list, newest first), not both" }]);
  }
  const { metrics } = parsed.data;
  if (process.env.NODE_ENV === "production" && metrics.enabled && metrics.port === undefined && metrics.token === undefined && !metrics.public) {
    throw invalid([
      {
        key: "metrics.enabled",
        message: "would serve the metrics on the service's public port to anyone, which NODE_ENV=production refuses",
        fix: "set metrics.port (a listener of their own, kept off the public network), metrics.token (or METRICS_TOKEN: a secret scrapers send as Bearer) or metrics.public: true (public on purpose)",
      },
    ]);
  }
  // PORT=4000 alone must not leave links, cookies and OAuth redirect URIs on port 3000.
  if (input.publicUrl === undefined && parsed.data.port !== 0 && (input.port !== undefined || input.host !== undefined)) {
    parsed.data.publicUrl = listenUrl(parsed.data.host, parsed.data.port);
  }
  return parsed.data;
}

/** The configured secrets, newest first (`secrets`, or `secret` alone); empty when none is set. */
export function configuredSecrets(config: Pick<ResolvedConfig, "secret" | "secrets">): string[] {
  return config.secrets ?? (config.secret === undefined ? [] : [config.secret]);
}

const envInt = z.coerce.number().int();

const BUILT_IN_PROVIDERS = ["google", "github", "discord"] as const;

/**
 * GOOGLE_CLIENT_ID / GOOGLE_CLIENT_SECRET (likewise GITHUB_, DISCORD_) register or complete the
 * built-in provider of that name; only one of the pair set fails validation, naming the other.
 */
function providersFromEnv(providers: PortcullisConfig["providers"], env: NodeJS.ProcessEnv): PortcullisConfig["providers"] {
  const out = { ...providers };
  for (const type of BUILT_IN_PROVIDERS) {
    const clientId = env[`${type.toUpperCase()}_CLIENT_ID`];
    const clientSecret = env[`${type.toUpperCase()}_CLIENT_SECRET`];
    if (!clientId && !clientSecret) continue;
    const current = (out[type] ?? { type }) as Record<string, unknown>;
    out[type] = { ...current, ...(clientId ? { clientId } : {}), ...(clientSecret ? { clientSecret } : {}) } as NonNullable<typeof out>[string];
  }
  return out;
}

/** Environment overrides (PORT, HOST, LOG_LEVEL, DATABASE_URL, PUBLIC_URL, AUTH_SECRET or AUTH_SECRETS (comma-separated, newest first), SMTP_URL, REDIS_URL, METRICS_TOKEN, <PROVIDER>_CLIENT_ID/_SECRET) on top of a config. */
export function applyEnv(config: PortcullisConfig, env: NodeJS.ProcessEnv): PortcullisConfig {
  const out: PortcullisConfig = { ...config };
  if (env.PORT) {
    const port = envInt.safeParse(env.PORT);
    if (!port.success) throw invalid([{ key: "port", message: "must be an integer" }]);
    out.port = port.data;
  }
  if (env.HOST) out.host = env.HOST;
  if (env.LOG_LEVEL) out.logLevel = env.LOG_LEVEL as PortcullisConfig["logLevel"];
  if (env.DATABASE_URL) out.databaseUrl = env.DATABASE_URL;
  if (env.PUBLIC_URL) out.publicUrl = env.PUBLIC_URL;
  if (env.AUTH_SECRET && env.AUTH_SECRETS) {
    throw invalid([{ key: "secrets", message: "set either AUTH_SECRET or AUTH_SECRETS, not both" }]);
  }
  // Either variable replaces both config keys: the environment wins, as for every other key.
  if (env.AUTH_SECRET) {
    out.secret = env.AUTH_SECRET;
    delete out.secrets;
  }
  if (env.AUTH_SECRETS) {
    out.secrets = env.AUTH_SECRETS.split(",").map((s) => s.trim()).filter(Boolean);
    delete out.secret;
  }
  if (env.SMTP_URL) out.email = { ...config.email, smtpUrl: env.SMTP_URL };
  if (env.REDIS_URL) out.rateLimit = { ...config.rateLimit, redisUrl: env.REDIS_URL };
  if (env.METRICS_TOKEN) out.metrics = { ...config.metrics, token: env.METRICS_TOKEN };
  out.providers = providersFromEnv(config.providers, env);
  return out;
}
