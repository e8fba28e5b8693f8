import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import { DEFAULT_RATE_LIMIT_RULES, type ResolvedConfig } from "../../config/index.ts";

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSec: number };

export interface RateLimiter {
  /** `path` is the REST path below the base path (tRPC calls are mapped onto it). */
  consume(ip: string, path: string): Promise<RateLimitDecision>;
}

interface Rule {
  pattern: string;
  limiter: RateLimiterAbstract;
}

function matches(pattern: string, path: string): boolean {
  return pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

/**
 * Per client IP and path (CONTRACT.md §8). Exact rules win over wildcard rules, which win over
 * the default window; a rule set to `false` disables limiting for its paths.
 */
export function createRateLimiter(config: ResolvedConfig["rateLimit"]): RateLimiter {
  if (!config.enabled) return { consume: async () => ({ allowed: true }) };
  const merged = { ...DEFAULT_RATE_LIMIT_RULES, ...config.rules };
  const rules: (Rule | { pattern: string; limiter: null })[] = Object.entries(merged)
    .sort(([a], [b]) => Number(a.endsWith("/*")) - Number(b.endsWith("/*")) || b.length - a.length)
    .map(([pattern, rule]) => ({
      pattern,
      limiter: rule === false ? null : new RateLimiterMemory({ points: rule.max, duration: rule.window, keyPrefix: pattern }),
    }));
  const fallback = new RateLimiterMemory({ points: config.max, duration: config.window, keyPrefix: "*" });

  return {
    async consume(ip, path) {
      const rule = rules.find((r) => matches(r.pattern, path));
      if (rule && rule.limiter === null) return { allowed: true };
      const limiter = rule?.limiter ?? fallback;
      try {
        await limiter.consume(`${ip}|${path}`);
        return { allowed: true };
      } catch (res) {
        if (res instanceof RateLimiterRes) return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
        throw res;
      }
    },
  };
}
