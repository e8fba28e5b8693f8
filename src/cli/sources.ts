/**
 * Where each config key came from, so a start-up error names what the operator actually set:
 * the environment variable (config/index.ts applyEnv) or the config file.
 */

/** Config key (dotted) → the environment variable that sets it. Providers' pairs are added per name. */
const ENV_KEYS: Record<string, string> = {
  port: "PORT",
  host: "HOST",
  logLevel: "LOG_LEVEL",
  databaseUrl: "DATABASE_URL",
  publicUrl: "PUBLIC_URL",
  secret: "AUTH_SECRET",
  secrets: "AUTH_SECRETS",
  "email.smtpUrl": "SMTP_URL",
  "rateLimit.redisUrl": "REDIS_URL",
  "metrics.token": "METRICS_TOKEN",
};

/** Variables whose values are never printed, whole or in part. */
const SECRET_VARS = /^(AUTH_SECRETS?|METRICS_TOKEN|[A-Z]+_CLIENT_SECRET)$/;
/** Variables holding URLs that may carry a password. */
const URL_VARS = new Set(["DATABASE_URL", "SMTP_URL", "REDIS_URL"]);

export interface ConfigSources {
  /** The config file as given (--config or PORTCULLIS_CONFIG), resolved; undefined without one. */
  file?: string;
  /** How the file was named: "--config" or "PORTCULLIS_CONFIG". */
  fileFrom?: string;
  env: NodeJS.ProcessEnv;
}

/** The environment variable that set `key` (or the key it lies under: `secrets.1` → AUTH_SECRETS), when one is set. */
export function envVarOf(key: string, sources: ConfigSources): string | undefined {
  const provider = /^providers\.(google|github|discord)\.(clientId|clientSecret)$/.exec(key);
  if (provider) {
    const name = `${provider[1]!.toUpperCase()}_${provider[2] === "clientId" ? "CLIENT_ID" : "CLIENT_SECRET"}`;
    return sources.env[name] ? name : undefined;
  }
  for (let k = key; k; k = k.includes(".") ? k.slice(0, k.lastIndexOf(".")) : "") {
    const name = ENV_KEYS[k];
    if (name && sources.env[name]) return name;
  }
  return undefined;
}

/** A URL with its password replaced by `***`. */
export function redactUrl(raw: string): string {
  if (!URL.canParse(raw)) return raw.replace(/:[^:@/]*@/, ":***@");
  const url = new URL(raw);
  if (url.password) url.password = "***";
  return url.toString();
}

/** `PORT="abc"`, `DATABASE_URL="postgres://app:***@db/auth"`, or just `AUTH_SECRET` for a secret. */
export function describeVar(name: string, env: NodeJS.ProcessEnv): string {
  const value = env[name] ?? "";
  if (SECRET_VARS.test(name)) return name;
  const shown = URL_VARS.has(name) ? redactUrl(value) : value;
  return `${name}=${JSON.stringify(shown.length > 200 ? `${shown.slice(0, 200)}...` : shown)}`;
}

/** "from PORT=\"abc\"", "in /srv/portcullis.config.mjs", or "the default" when neither set it. */
export function originOf(key: string, sources: ConfigSources): string {
  const name = envVarOf(key, sources);
  if (name) return `from ${describeVar(name, sources.env)}`;
  return sources.file ? `in ${sources.file}` : "the default";
}

/**
 * For a key set nowhere: its environment variable first (what docs/deploying.md tells operators
 * to set), then the key in the config file: "set AUTH_SECRET (or secret in /srv/portcullis.config.mjs) to".
 */
export function whereToAdd(key: string, sources: ConfigSources): string {
  const env = ENV_KEYS[key];
  const inFile = `${key} in ${sources.file ?? "a config file"}`;
  return env ? `set ${env} (or ${inFile}) to` : `set ${inFile} to`;
}

/** "set PORT to" / "set port in /srv/portcullis.config.mjs to" / "set port in a config file (--config) to". */
export function whereToSet(key: string, sources: ConfigSources): string {
  const name = envVarOf(key, sources);
  if (name) return `set ${name} to`;
  if (sources.file) return `set ${key} in ${sources.file} to`;
  const env = ENV_KEYS[key];
  return env ? `set ${env} (or ${key} in a config file) to` : `set ${key} in a config file (--config) to`;
}
