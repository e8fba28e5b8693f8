import { createHash } from "node:crypto";
import type DatabaseType from "better-sqlite3";
import type PgType from "pg";
import type { Logger } from "pino";
import type { Redis as RedisType } from "ioredis";
import { loadLimiter, RateLimiterRes, type RateLimiterAbstract } from "./limiters.ts";
import { resilientLimiter, STORE_TIMEOUT_MS, throttledReport, type ResilientLimiter, type Store } from "./resilient.ts";

export type { Store } from "./resilient.ts";
import { loadPackage } from "../load.ts";
import { DEFAULT_RATE_LIMIT_RULES, type ResolvedConfig } from "../config/index.ts";
import type { DatabaseTarget } from "../db/orm.ts";

export type RateLimitDecision = { allowed: true } | { allowed: false; retryAfterSec: number };

export interface RateLimiter {
  /** `path` is the REST path below the base path (tRPC calls are mapped onto it). */
  consume(ip: string, path: string): Promise<RateLimitDecision>;
  /** Where the counts live: this process, the shared database, Redis, or nowhere (limits off). */
  readonly storage: RateLimitStorage | "off";
  close(): Promise<void>;
}

export interface RateLimiterDeps {
  /** The service's database; `storage: "database"` keeps its counters there. */
  target: DatabaseTarget;
  logger: Logger;
  /** A worker of `serve --workers N`: its siblings share the counts (the database store by default). */
  clustered?: boolean;
}

/** Table of the database store, created by our migration (Migration20261122017000_rate_limits). */
export const RATE_LIMIT_TABLE = "rate_limits";
/** The key column is varchar(255); longer keys are replaced by their digest. */
const MAX_KEY_LENGTH = 255;

interface Rule {
  pattern: string;
  /** null: the rule is `false`, no limit on its paths. */
  limiter: ResilientLimiter | null;
}

/**
 * Health checks are never limited, whatever the rules say: a load balancer probes from one
 * address, and a 429 would take a busy instance out of rotation (docs/operations.md, Health
 * checks). They are still counted in the metrics. (GET /metrics never reaches the limiter.)
 */
const NEVER_LIMITED = new Set(["/ok", "/ready"]);

function matches(pattern: string, path: string): boolean {
  return pattern.endsWith("/*") ? path.startsWith(pattern.slice(0, -1)) : pattern === path;
}

const digest = (value: string) => createHash("sha256").update(value).digest("hex");

/** Row keys are `{prefix}:{ip}|{path}`: a readable prefix for short patterns, a digest for long ones. */
function keyPrefix(pattern: string): string {
  return pattern.length <= 64 ? pattern : `#${digest(pattern).slice(0, 32)}`;
}

function limitKey(prefix: string, ip: string, path: string): string {
  const key = `${ip}|${path}`;
  return prefix.length + 1 + key.length <= MAX_KEY_LENGTH ? key : `#${digest(key)}`;
}

function denied(res: RateLimiterRes): RateLimitDecision {
  return { allowed: false, retryAfterSec: Math.max(1, Math.ceil(res.msBeforeNext / 1000)) };
}

export type RateLimitStorage = "memory" | "database" | "redis";

/**
 * `rateLimit.storage`, or its default: shared (`database`) on PostgreSQL, where instances are
 * several, and for the workers of `serve --workers N`; per-process memory for one SQLite process.
 */
export function storageOf(config: ResolvedConfig["rateLimit"], target: DatabaseTarget, clustered = false): RateLimitStorage {
  return config.storage ?? (target.dialect === "postgresql" || clustered ? "database" : "memory");
}

/** The shared store the config names, or null for per-process memory counts. */
export function sharedStore(config: ResolvedConfig["rateLimit"], deps: RateLimiterDeps): Store | null {
  const storage = storageOf(config, deps.target, deps.clustered);
  if (storage === "database") return databaseStore(deps.target, deps.logger);
  if (storage === "redis") return redisStore(config.redisUrl!, config.redisKeyPrefix, deps.logger);
  return null;
}

/**
 * Redis (rate-limiter-flexible's atomic INCR + PEXPIRE script). No offline queue and one retry
 * per command: while Redis is away a call fails at once and the caller counts in memory,
 * instead of queueing requests behind a reconnect. ioredis puts `keyPrefix` (`rateLimit.redisKeyPrefix`)
 * before every key it sends, the script's KEYS included.
 */
export function redisStore(url: string, keyPrefix: string, logger: Logger): Store {
  const { Redis } = loadPackage("ioredis") as { Redis: typeof RedisType };
  const RateLimiterRedis = loadLimiter("RateLimiterRedis");
  const client = new Redis(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1, connectTimeout: STORE_TIMEOUT_MS, keyPrefix });
  let lastReport = 0;
  client.on("error", (err) => {
    // ioredis reports every reconnect attempt: one line per 10 s is enough.
    if (Date.now() - lastReport < 10_000) return;
    lastReport = Date.now();
    logger.warn({ err }, "rate limit store (redis) connection failed");
  });
  return {
    make: (opts) => new RateLimiterRedis({ ...opts, storeClient: client }),
    retryBusy: false,
    close: async () => {
      client.disconnect();
    },
  };
}

export function databaseStore(target: DatabaseTarget, logger: Logger): Store {
  const common = { tableName: RATE_LIMIT_TABLE, tableCreated: true, clearExpiredByTimeout: false };
  if (target.dialect === "postgresql") {
    const pg = loadPackage("pg") as typeof PgType;
    const RateLimiterPostgres = loadLimiter("RateLimiterPostgres");
    const pool = new pg.Pool({ connectionString: target.location, max: 4 });
    // An idle client that loses its connection must not crash the process; the next query reconnects.
    pool.on("error", (err) => logger.warn({ err }, "rate limit store connection lost"));
    return {
      make: (opts) => new RateLimiterPostgres({ ...common, ...opts, storeClient: pool, storeType: "pool" }),
      retryBusy: false,
      close: () => pool.end(),
    };
  }
  // A connection of its own, like the session store: WAL, and never a synchronous wait on a
  // lock (that would block the event loop while MikroORM's writer needs it to commit).
  const Database = loadPackage("better-sqlite3") as typeof DatabaseType;
  const RateLimiterSQLite = loadLimiter("RateLimiterSQLite");
  const db = new Database(target.location);
  db.pragma("journal_mode = wal");
  db.pragma("busy_timeout = 0");
  return {
    make: (opts) => new RateLimiterSQLite({ ...common, ...opts, storeClient: db, storeType: "better-sqlite3" }),
    retryBusy: true,
    close: async () => {
      db.close();
    },
  };
}

/**
 * Per client IP and path (docs/wire-contract.md §8). Exact rules win over wildcard rules, which win over
 * the default window; a rule set to `false` disables limiting for its paths.
 *
 * Storage: `memory` (the default on SQLite) counts in this process; `database` (the default on
 * PostgreSQL) keeps the counts in the `rate_limits` table (rate-limiter-flexible's PostgreSQL or
 * SQLite store), so every instance on one database shares them; `redis` keeps them in Redis,
 * for deployments of many instances.
 *
 * When a shared store fails (an error, or no answer within STORE_TIMEOUT_MS) the request
 * is NOT refused and NOT let through unlimited: it is counted by a per-instance memory limiter
 * with the same rule, and the failure is logged (at most one error line per 10 s). An outage
 * of the counter table therefore degrades the limits to per-instance ones instead of taking
 * sign-in down (fail open to memory); a failing database fails the request itself anyway.
 */
export function createRateLimiter(config: ResolvedConfig["rateLimit"], deps: RateLimiterDeps): RateLimiter {
  if (!config.enabled) return { storage: "off", consume: async () => ({ allowed: true }), close: async () => {} };
  const storage = storageOf(config, deps.target, deps.clustered);
  const store = sharedStore(config, deps);

  const report = throttledReport(deps.logger, "rate limit store failed: counting in memory on this instance");
  const build = (pattern: string, points: number, duration: number): Rule => ({
    pattern,
    limiter: resilientLimiter(store, { points, duration, keyPrefix: keyPrefix(pattern) }, report),
  });
  const merged = { ...DEFAULT_RATE_LIMIT_RULES, ...config.rules };
  const rules: Rule[] = Object.entries(merged)
    .sort(([a], [b]) => Number(a.endsWith("/*")) - Number(b.endsWith("/*")) || b.length - a.length)
    .map(([pattern, rule]) => (rule === false ? { pattern, limiter: null } : build(pattern, rule.max, rule.window)));
  const defaultRule = build("*", config.max, config.window);

  return {
    storage,
    async consume(ip, path) {
      if (NEVER_LIMITED.has(path)) return { allowed: true };
      const rule = rules.find((r) => matches(r.pattern, path)) ?? defaultRule;
      if (rule.limiter === null) return { allowed: true };
      try {
        await rule.limiter.consume(limitKey(keyPrefix(rule.pattern), ip, path));
        return { allowed: true };
      } catch (res) {
        if (res instanceof RateLimiterRes) return denied(res);
        throw res;
      }
    },
    async close() {
      await store?.close();
    },
  };
}
