import { createHmac } from "node:crypto";
import type { Logger } from "pino";
import { RateLimiterRes } from "./limiters.ts";
import type { ResolvedConfig } from "../config/index.ts";
import type { DatabaseTarget } from "../db/orm.ts";
import { sharedStore, type Store } from "./rate-limit.ts";
import { resilientLimiter, throttledReport } from "./resilient.ts";

/**
 * Per-address limit on the mails anyone can trigger for an address (docs/security.md):
 * password-reset, verification, magic-link, one-time-code and organization-invitation requests, `rateLimit.perAddress` (3 per 15 min by default)
 * for each purpose and normalised address, whatever the client IP. The endpoints answer before
 * this runs (the check sits in the deferred mail job), so a limited request answers exactly
 * like a sent mail, and unknown addresses count like known ones: no enumeration.
 *
 * Keys are an HMAC of the address under the service secret, never the address: the counter
 * table holds no emails, and a digest of a guessable address cannot be checked offline.
 */
export type MailPurpose = "password-reset" | "email-verification" | "change-email" | "magic-link" | "email-otp" | "organization-invitation";

export interface AddressLimiter {
  /** Counts one mail for this address; false when the address is over its limit (send nothing). */
  allow(purpose: MailPurpose, email: string): Promise<boolean>;
  close(): Promise<void>;
}

export interface AddressLimiterDeps {
  target: DatabaseTarget;
  logger: Logger;
  clustered?: boolean;
  /** The newest service secret: keys the address digest. */
  secret: string;
}

export function createAddressLimiter(config: ResolvedConfig["rateLimit"], deps: AddressLimiterDeps): AddressLimiter {
  const rule = config.perAddress;
  if (!config.enabled || rule === false) return { allow: async () => true, close: async () => {} };
  const store: Store | null = sharedStore(config, deps);
  const report = throttledReport(deps.logger, "address limit store failed: counting in memory on this instance");
  const limiter = resilientLimiter(store, { points: rule.max, duration: rule.window, keyPrefix: "address" }, report);
  return {
    async allow(purpose, email) {
      const key = `${purpose}:${createHmac("sha256", deps.secret).update(email).digest("base64url")}`;
      try {
        await limiter.consume(key);
        return true;
      } catch (res) {
        if (res instanceof RateLimiterRes) return false;
        throw res;
      }
    },
    async close() {
      await store?.close();
    },
  };
}
