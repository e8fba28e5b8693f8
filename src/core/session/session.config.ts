import { z } from "zod";

/** The `session` section of the config (src/config/schema.ts): lifetimes, the cache, freshness. */
export const sessionConfig = z
  .object({
    /** Session lifetime, slid forward as the session is used. */
    expiresInSec: z.number().int().positive().default(7 * 24 * 3600),
    /** A session is slid forward at most once per this many seconds (a write on a check). */
    updateAgeSec: z.number().int().nonnegative().default(24 * 3600),
    /** Lifetime of a `rememberMe: false` session (a browser-session cookie). */
    shortExpiresInSec: z.number().int().positive().default(24 * 3600),
    /**
     * In-process session cache TTL (0 turns the cache off). Every revoke, ban, sign-out,
     * password or user change evicts at once, here and on every other instance (PostgreSQL
     * LISTEN/NOTIFY, or the cluster's IPC with `serve --workers`); the TTL only bounds what a
     * write from outside the service (a hand-edited row) could leave cached.
     */
    cacheTtlMs: z.number().int().min(0).max(60_000).default(1000),
    /** Sessions the cache holds at most; the least recently used go first. */
    cacheMaxEntries: z.number().int().min(1).max(10_000_000).default(10_000),
    /**
     * A session signed in less than this long ago is "fresh": delete-user needs no password
     * from it (better-auth's `session.freshAge`); 0 treats every session as fresh.
     */
    freshAgeSec: z.number().int().nonnegative().default(24 * 3600),
  })
  .strict()
  .prefault({});
