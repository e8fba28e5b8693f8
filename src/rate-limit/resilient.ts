import type { Logger } from "pino";
import { RateLimiterMemory, RateLimiterRes, type RateLimiterAbstract } from "./limiters.ts";

/** A shared counter store (rate-limit.ts: the database or Redis). */
export interface Store {
  make(opts: { points: number; duration: number; keyPrefix: string }): RateLimiterAbstract;
  /** SQLite: its connection never waits on a lock (busy_timeout 0), so a busy write is retried here, asynchronously. */
  retryBusy: boolean;
  close(): Promise<void>;
}

/** A store call that takes longer counts as a failure. */
export const STORE_TIMEOUT_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function isSqliteBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED"));
}

class StoreTimeout extends Error {
  override name = "StoreTimeout";
}

/** Rejects with StoreTimeout after `ms` (the store call itself may still finish later). */
export function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new StoreTimeout(`rate limit store did not answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Logs a store failure at most once per 10 s, with how many were left unlogged since. */
export function throttledReport(logger: Logger, message: string): (err: unknown) => void {
  let lastReport = 0;
  let suppressed = 0;
  return (err) => {
    const now = Date.now();
    if (now - lastReport < 10_000) {
      suppressed += 1;
      return;
    }
    logger.error({ err, suppressed }, message);
    lastReport = now;
    suppressed = 0;
  };
}

/** A counter that answers like rate-limiter-flexible's: resolves under the limit, rejects with RateLimiterRes over it. */
export interface ResilientLimiter {
  consume(key: string): Promise<unknown>;
  reward(key: string, points: number): Promise<unknown>;
}

/**
 * THE store call of every limit (per-IP rules, per-address mails, step-up): on the shared store
 * (database or Redis), SQLite's busy answers retried within STORE_TIMEOUT_MS, and when the store
 * fails (an error, or no answer in time) counted by a per-instance memory limiter with the same
 * rule instead, the failure reported: an outage of the counters degrades the limits to
 * per-instance ones, never lets requests through unlimited, never refuses them for it.
 * Without a shared store, memory alone.
 */
export function resilientLimiter(store: Store | null, opts: { points: number; duration: number; keyPrefix: string }, report: (err: unknown) => void): ResilientLimiter {
  if (!store) return new RateLimiterMemory(opts);
  const limiter: RateLimiterAbstract = store.make(opts);
  const fallback = new RateLimiterMemory(opts);
  const call = async <T>(op: (l: RateLimiterAbstract) => Promise<T>): Promise<T> => {
    const deadline = Date.now() + STORE_TIMEOUT_MS;
    const retrying = async (): Promise<T> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await op(limiter);
        } catch (err) {
          if (!(store.retryBusy && isSqliteBusy(err)) || Date.now() + attempt > deadline) throw err;
          await sleep(Math.min(attempt, 10));
        }
      }
    };
    try {
      return await withTimeout(retrying(), STORE_TIMEOUT_MS);
    } catch (err) {
      if (err instanceof RateLimiterRes) throw err;
      report(err);
      return op(fallback);
    }
  };
  return {
    consume: (key) => call((l) => l.consume(key)),
    reward: (key, points) => call((l) => l.reward(key, points)),
  };
}
