import { z } from "zod";
import { configSchema, type PortcullisConfig, type ResolvedConfig } from "./schema.ts";

export * from "./schema.ts";

export class ConfigError extends Error {
  override name = "ConfigError";
}

/** Validates the whole config; the message names every bad key. */
export function resolveConfig(input: PortcullisConfig): ResolvedConfig {
  const parsed = configSchema.safeParse(input);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => {
      const key = i.path.length ? i.path.join(".") : "(root)";
      const extra = i.code === "unrecognized_keys" ? ` ${i.keys.join(", ")}` : "";
      return `  ${key}: ${i.message}${extra}`;
    });
    throw new ConfigError(`Invalid Portcullis config:\n${lines.join("\n")}`);
  }
  if (parsed.data.secret !== undefined && parsed.data.secrets !== undefined) {
    throw new ConfigError("Invalid Portcullis config:\n  secrets: set either secret (one) or secrets (a list, newest first), not both");
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

/** Environment overrides (PORT, HOST, DATABASE_URL, PUBLIC_URL, AUTH_SECRET or AUTH_SECRETS (comma-separated, newest first), SMTP_URL, REDIS_URL, <PROVIDER>_CLIENT_ID/_SECRET) on top of a config. */
export function applyEnv(config: PortcullisConfig, env: NodeJS.ProcessEnv): PortcullisConfig {
  const out: PortcullisConfig = { ...config };
  if (env.PORT) {
    const port = envInt.safeParse(env.PORT);
    if (!port.success) throw new ConfigError(`Invalid Portcullis config:\n  PORT: not an integer`);
    out.port = port.data;
  }
  if (env.HOST) out.host = env.HOST;
  if (env.DATABASE_URL) out.databaseUrl = env.DATABASE_URL;
  if (env.PUBLIC_URL) out.publicUrl = env.PUBLIC_URL;
  if (env.AUTH_SECRET && env.AUTH_SECRETS) {
    throw new ConfigError("Invalid Portcullis config:\n  AUTH_SECRETS: set either AUTH_SECRET or AUTH_SECRETS, not both");
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
  out.providers = providersFromEnv(config.providers, env);
  return out;
}
