import type { App } from "../../app.ts";
import { createTotalCache, type TotalCache } from "../../core/index.ts";

/** list-users' `total`: counted once per distinct filter and kept briefly when large (core/total-cache.ts). */
export { CACHE_FROM_ROWS, FRESH_MS, MAX_AGE_MS } from "../../core/index.ts";

/** One cache per Portcullis instance (no module-level state shared between instances). */
const caches = new WeakMap<App, TotalCache>();

export function totalCacheOf(app: App): TotalCache {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = createTotalCache(app, "list-users")));
  return cache;
}
