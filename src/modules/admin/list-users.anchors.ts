import type { App } from "../../app.ts";

/**
 * Keyset anchors for list-users pages deep inside a large list ("keyset
 * paging where offset would scan").
 *
 * An offset page reads and skips `offset` index entries: offset 500,000 of a million users
 * skips half a million, even read from the nearer end. The anchors of a (filter, order) are
 * the ids of every STRIDE-th user of that list, found by one scan of the order's index; a page
 * then starts at the nearest anchor at or before its offset (a row-value comparison on the
 * order's columns, which the same index answers) and skips fewer than STRIDE entries.
 *
 * Anchors are built in the background after the first page that would skip more than
 * ANCHORS_FROM entries (that page is read by offset, as before), reused while fresh, rebuilt in
 * the background once FRESH_MS old and dropped at MAX_AGE_MS, like the list's total
 * (list-users.totals.ts): a page addressed through them is the page of the list as it was a
 * few seconds ago, as a page addressed from the total's end already is. A user removed since
 * makes its anchor find nothing; the caller then reads that page by offset.
 */
export const STRIDE = 10_000;
/** Offsets that skip fewer entries than this are read directly (a few milliseconds at most). */
export const ANCHORS_FROM = 50_000;
const FRESH_MS = 10_000;
const MAX_AGE_MS = 60_000;
/** (filter, order) pairs remembered per instance (least recently used dropped first). */
const MAX_ENTRIES = 64;

interface Entry {
  /** anchors[i]: the id of the user at position i·STRIDE of the list (0-based). */
  anchors: string[];
  builtAtMs: number;
}

export interface AnchorCache {
  /**
   * The anchor at or before `offset` (its id, and how far past it the page starts; `stale` once
   * FRESH_MS old), or undefined (none, or older than MAX_AGE_MS): then read the page by offset.
   */
  at(key: string, offset: number): { id: string; skip: number; stale: boolean } | undefined;
  /**
   * Builds (or rebuilds) a key's anchors in the background, at most one build per key at a
   * time. Called after the page that asked has been read, so the build never slows that read.
   */
  build(key: string, build: () => Promise<string[]>): void;
  /** Forgets a key's anchors (one of them led nowhere: a user removed since they were built). */
  drop(key: string): void;
}

function createAnchorCache(app: App): AnchorCache {
  const entries = new Map<string, Entry>();
  const building = new Set<string>();
  return {
    at(key, offset) {
      const entry = entries.get(key);
      if (!entry) return undefined;
      const ageMs = app.clock.now().getTime() - entry.builtAtMs;
      if (ageMs >= MAX_AGE_MS || ageMs < 0) {
        entries.delete(key);
        return undefined;
      }
      // Most recently used last: the first key is the one to drop.
      entries.delete(key);
      entries.set(key, entry);
      const i = Math.min(Math.floor(offset / STRIDE), entry.anchors.length - 1);
      if (i < 0) return undefined;
      return { id: entry.anchors[i]!, skip: offset - i * STRIDE, stale: ageMs >= FRESH_MS };
    },
    build(key, build) {
      if (building.has(key)) return;
      building.add(key);
      const startedAtMs = app.clock.now().getTime();
      build()
        .then(
          (anchors) => {
            entries.delete(key);
            entries.set(key, { anchors, builtAtMs: startedAtMs });
            if (entries.size > MAX_ENTRIES) entries.delete(entries.keys().next().value!);
          },
          (err: unknown) => app.logger.warn({ err }, "list-users: building page anchors failed"),
        )
        .finally(() => building.delete(key));
    },
    drop(key) {
      entries.delete(key);
    },
  };
}

/** One cache per Portcullis instance (no module-level state shared between instances). */
const caches = new WeakMap<App, AnchorCache>();

export function anchorCacheOf(app: App): AnchorCache {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = createAnchorCache(app)));
  return cache;
}
