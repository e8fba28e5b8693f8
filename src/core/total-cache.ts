import type { App } from "../app.ts";

/**
 * A list's `total`, counted once per distinct query and kept briefly when it is large (admin
 * list-users, organization list-members).
 *
 * Counting a million rows reads a million index entries (~40 ms here) on every page of a paging
 * client; a small set counts in microseconds. So a total below CACHE_FROM_ROWS is counted on
 * every page and is always exact (what the tests compare), and a larger one is reused for
 * FRESH_MS, then served while a background recount runs until MAX_AGE_MS. An exact count rather
 * than the planner's estimate (pg_class.reltuples): the estimate drifts by percents between
 * ANALYZEs, has none for a filter, and pages are addressed from this total, so it must be a real
 * count of the same filter. A change the owner of the list knows of (`forget`) drops the totals
 * it touches on this instance at once; other instances see it within FRESH_MS.
 */
export const CACHE_FROM_ROWS = 10_000;
export const FRESH_MS = 10_000;
export const MAX_AGE_MS = 60_000;
/** Distinct queries remembered per cache (least recently used dropped first). */
const MAX_ENTRIES = 256;

interface Entry {
  total: number;
  countedAtMs: number;
  refreshing: boolean;
}

export interface TotalCache {
  /** A usable cached total, or undefined (count now); a stale one starts `recount` in the background. */
  get(key: string, recount: () => Promise<number>): number | undefined;
  /**
   * Remembers a total just counted (only a large one). `generation`: the cache's generation when
   * the count started; a `forget` since then makes the count too old to keep.
   */
  put(key: string, total: number, countedAtMs: number, generation?: number): void;
  /** Bumped by every forget. */
  readonly generation: number;
  /** Drops every total whose key starts with `prefix` ("" for all), and any count already under way. */
  forget(prefix: string): void;
}

/** `what` names the list in the log line of a failed recount. */
export function createTotalCache(app: App, what: string): TotalCache {
  const entries = new Map<string, Entry>();
  let generation = 0;
  const put = (key: string, total: number, countedAtMs: number, since = generation) => {
    if (since !== generation) return;
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
        const since = generation;
        recount().then(
          (total) => put(key, total, nowMs, since),
          (err: unknown) => {
            entry.refreshing = false;
            app.logger.warn({ err }, `${what}: recounting a cached total failed`);
          },
        );
      }
      return entry.total;
    },
    put,
    get generation() {
      return generation;
    },
    forget(prefix) {
      generation++;
      for (const key of [...entries.keys()]) if (key.startsWith(prefix)) entries.delete(key);
    },
  };
}
