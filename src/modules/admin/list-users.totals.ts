import type { App } from "../../app.ts";

/**
 * list-users' `total`, counted once per distinct filter and kept briefly when it is large.
 *
 * Counting a million users reads a million index entries (~40 ms here) on every page of a
 * paging admin; a small table counts in microseconds. So a total below CACHE_FROM_ROWS is
 * counted on every page and is always exact (what the tests compare), and a larger one is
 * reused for FRESH_MS, then served while a background recount runs until MAX_AGE_MS: a created
 * or removed user shows in a large total within about FRESH_MS. An exact count rather than the
 * planner's estimate (pg_class.reltuples): the estimate drifts by percents between ANALYZEs, has
 * none for a filter, and the page itself is addressed from this total (see listUsers), so it
 * must be a real count of the same filter.
 */
export const CACHE_FROM_ROWS = 10_000;
export const FRESH_MS = 10_000;
export const MAX_AGE_MS = 60_000;
/** Distinct filters remembered per instance (least recently used dropped first). */
const MAX_ENTRIES = 256;

interface Entry {
  total: number;
  countedAtMs: number;
  refreshing: boolean;
}

export interface TotalCache {
  /** A usable cached total, or undefined (count now); a stale one starts `recount` in the background. */
  get(key: string, recount: () => Promise<number>): number | undefined;
  /** Remembers a total just counted (only a large one). */
  put(key: string, total: number, countedAtMs: number): void;
}

function createTotalCache(app: App): TotalCache {
  const entries = new Map<string, Entry>();
  const put = (key: string, total: number, countedAtMs: number) => {
    entries.delete(key);
    if (total < CACHE_FROM_ROWS) return;
    entries.set(key, { total, countedAtMs, refreshing: false });
    if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
  };
  return {
    get(key, recount) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      const nowMs = app.clock.now().getTime();
      const ageMs = nowMs - entry.countedAtMs;
      if (ageMs >= MAX_AGE_MS || ageMs < 0) {
        entries.delete(key);
        return undefined;
      }
      // Most recently used last: the first key is the one to drop.
      entries.delete(key);
      entries.set(key, entry);
      if (ageMs >= FRESH_MS && !entry.refreshing) {
        entry.refreshing = true;
        recount().then(
          (total) => put(key, total, nowMs),
          (err: unknown) => {
            entry.refreshing = false;
            app.logger.warn({ err }, "list-users: recounting a cached total failed");
          },
        );
      }
      return entry.total;
    },
    put,
  };
}

/** One cache per Portcullis instance (no module-level state shared between instances). */
const caches = new WeakMap<App, TotalCache>();

export function totalCacheOf(app: App): TotalCache {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = createTotalCache(app)));
  return cache;
}
