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
  return parsed.data;
}

const envInt = z.coerce.number().int();

/** Environment overrides (PORT, HOST, DATABASE_URL, PUBLIC_URL, AUTH_SECRET, SMTP_URL) on top of a config. */
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
  if (env.AUTH_SECRET) out.secret = env.AUTH_SECRET;
  if (env.SMTP_URL) out.email = { ...config.email, smtpUrl: env.SMTP_URL };
  return out;
}
