import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { PortcullisConfig } from "../config/index.ts";

/**
 * Development convenience (never in production): a secret generated once and kept in
 * ./data/secret, so sessions and sealed tokens survive restarts, and commands that seal (import)
 * use the same key as `serve`.
 */
function devSecret(): string {
  const file = resolve("data", "secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** The config with the development secret filled in when none is set outside production. */
export function withDevSecret(input: PortcullisConfig, env: NodeJS.ProcessEnv): PortcullisConfig {
  if (input.secret || input.secrets || env.NODE_ENV === "production") return input;
  return { ...input, secret: devSecret() };
}
