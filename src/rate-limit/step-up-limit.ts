import type { Logger } from "pino";
import { RateLimiterRes } from "./limiters.ts";
import { DEFAULT_RATE_LIMIT_RULES, type ResolvedConfig } from "../config/index.ts";
import type { DatabaseTarget } from "../db/orm.ts";
import { sharedStore, type Store } from "./rate-limit.ts";
import { resilientLimiter, throttledReport } from "./resilient.ts";

/**
 * The step-up limit (docs/security.md "Step-up"): every route that checks the caller's current
 * password (verify-password, change-password, delete-user with a password, the two-factor
 * routes that take one) spends from ONE budget, counted per user and per client address in the
 * configured rate-limit store, so every instance shares it. The per-IP path rules alone let a
 * botnet holding one stolen session guess from as many addresses as it has; the user's own
 * counter gives it no more guesses than one address gets.
 *
 * An attempt is taken before the password is verified (concurrent guesses cannot share one),
 * and handed back when the password was right: a right password costs nothing and clears
 * nothing, so the failures before it keep counting until their window ends.
 *
 * Window and max are the `/verify-password` rule's (3 per 10 s by default); `false` there, or
 * `rateLimit.enabled: false`, turns the step-up limit off.
 */
export type StepUpDecision = { allowed: true; refund(): Promise<void> } | { allowed: false; retryAfterSec: number };

export interface StepUpLimiter {
  /** Takes one attempt for the user and the client address (null: an in-process call, user only). */
  attempt(userId: string, ip: string | null): Promise<StepUpDecision>;
  close(): Promise<void>;
}

export interface StepUpLimiterDeps {
  target: DatabaseTarget;
  logger: Logger;
  clustered?: boolean;
}

const RULE_PATH = "/verify-password";
const ALLOWED_FREE: StepUpDecision = { allowed: true, refund: async () => {} };
export function createStepUpLimiter(config: ResolvedConfig["rateLimit"], deps: StepUpLimiterDeps): StepUpLimiter {
  const rule = { ...DEFAULT_RATE_LIMIT_RULES, ...config.rules }[RULE_PATH];
  if (!config.enabled || !rule) return { attempt: async () => ALLOWED_FREE, close: async () => {} };
  const store: Store | null = sharedStore(config, deps);
  const report = throttledReport(deps.logger, "step-up limit store failed: counting in memory on this instance");
  const limiter = resilientLimiter(store, { points: rule.max, duration: rule.window, keyPrefix: "step-up" }, report);

  /** One point of `key`; the wait in seconds when it is over the limit. */
  async function take(key: string): Promise<number | null> {
    try {
      await limiter.consume(key);
      return null;
    } catch (res) {
      if (res instanceof RateLimiterRes) return Math.max(1, Math.ceil(res.msBeforeNext / 1000));
      throw res;
    }
  }

  const giveBack = async (keys: string[]) => {
    await Promise.all(keys.map((key) => limiter.reward(key, 1)));
  };

  return {
    async attempt(userId, ip) {
      const keys = [`user:${userId}`, ...(ip === null ? [] : [`ip:${ip}`])];
      // Both keys at once: a shared store costs the latency of one call, not two.
      const waits = await Promise.all(keys.map(take));
      const refusedSec = waits.filter((w): w is number => w !== null);
      if (refusedSec.length > 0) {
        // Refused: the attempt never happens, so the keys it did take are handed back.
        await giveBack(keys.filter((_, i) => waits[i] === null));
        return { allowed: false, retryAfterSec: Math.max(...refusedSec) };
      }
      return { allowed: true, refund: () => giveBack(keys) };
    },
    async close() {
      await store?.close();
    },
  };
}
