import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/**
 * Rate-limit counters of the database store (`rateLimit.storage: "database"`), in the layout
 * rate-limiter-flexible's RateLimiterPostgres / RateLimiterSQLite read and write: the columns
 * and their order are theirs (their INSERT names no columns). `key` is `{rule}:{ip}|{path}`,
 * `expire` the end of the window in epoch milliseconds. Written only through the library; the
 * sweeper deletes expired rows.
 */
export const RateLimit = defineEntity({
  name: "RateLimit",
  tableName: "rate_limits",
  properties: (p) => ({
    key: p.string().length(255).primary(),
    points: p.integer().default(0),
    expire: p.bigint("number").nullable().index("rate_limits_expire_index"),
  }),
});

export type IRateLimit = InferEntity<typeof RateLimit>;
