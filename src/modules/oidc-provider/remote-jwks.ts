import { z } from "zod";
import type { App } from "../../app.ts";
import { guardedGetJson } from "../../http/guarded-fetch.ts";

/**
 * The key sets of `private_key_jwt` clients registered with a `jwks_uri` (docs/oidc-provider.md
 * "Client authentication"), fetched under the SSRF guard (src/http/guarded-fetch.ts) and kept in
 * memory per instance and client: JWKS_TTL_MS after a fetch, then fetched again. An assertion
 * signed with a key the cached set lacks (a rotation) refetches it, at most once per
 * JWKS_REFETCH_MS per client; a failed fetch is not retried for FAILURE_BACKOFF_MS. Any failure
 * is only "no keys": the client's authentication fails (invalid_client), nothing else.
 */

export const JWKS_TTL_MS = 5 * 60_000;
export const JWKS_REFETCH_MS = 60_000;
const FAILURE_BACKOFF_MS = 10_000;
/** Entries kept per instance; the oldest goes first. */
const MAX_ENTRIES = 1000;

export interface KeySet {
  keys: Record<string, unknown>[];
}

/** A public key set: what a client publishes never holds private or symmetric key members. */
const keySetBody = z.object({
  keys: z
    .array(z.looseObject({ kty: z.string().max(16) }).refine((k) => !("d" in k) && !("k" in k), "holds private key members"))
    .min(1)
    .max(20),
});

interface Entry {
  uri: string;
  keys: KeySet | null;
  /** When `keys` were fetched (ms, app clock). */
  fetchedAt: number;
  /** When the last attempt started, successful or not. */
  attemptedAt: number;
  pending: Promise<KeySet | null> | null;
}

const caches = new WeakMap<App, Map<string, Entry>>();

function cacheOf(app: App): Map<string, Entry> {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = new Map()));
  return cache;
}

function fetchInto(app: App, clientId: string, entry: Entry): Promise<KeySet | null> {
  const startedAt = app.clock.now().getTime();
  const previous = entry.keys && startedAt - entry.fetchedAt < JWKS_TTL_MS ? entry.keys : null;
  entry.attemptedAt = startedAt;
  const pending = guardedGetJson(entry.uri, keySetBody, { allowPrivate: app.config.oidcProvider.registration.allowPrivateUris }).then(
    (keys): KeySet => keys,
    (err: unknown) => {
      app.logger.warn({ clientId, err }, "oidc-provider: fetching a client's jwks_uri failed");
      return null;
    },
  ).then((keys) => {
    // A failed refetch (after an unknown kid) keeps a set that is still fresh.
    entry.keys = keys ?? previous;
    if (keys) entry.fetchedAt = startedAt;
    entry.pending = null;
    return keys;
  });
  entry.pending = pending;
  return pending;
}

/**
 * The client's published keys. `unknownKid`: the cached set lacked the assertion's key, so a
 * fresher one is wanted; null then when the set was fetched too recently to ask again.
 */
export async function remoteKeySet(app: App, clientId: string, uri: string, opts: { unknownKid: boolean }): Promise<KeySet | null> {
  const cache = cacheOf(app);
  const now = app.clock.now().getTime();
  let entry = cache.get(clientId);
  if (entry && entry.uri !== uri) {
    cache.delete(clientId);
    entry = undefined;
  }
  if (!entry) {
    if (cache.size >= MAX_ENTRIES) cache.delete(cache.keys().next().value!);
    entry = { uri, keys: null, fetchedAt: 0, attemptedAt: 0, pending: null };
    cache.set(clientId, entry);
    return fetchInto(app, clientId, entry);
  }
  if (entry.pending) return entry.pending;
  const sinceAttempt = now - entry.attemptedAt;
  if (!entry.keys || now - entry.fetchedAt >= JWKS_TTL_MS) return sinceAttempt < FAILURE_BACKOFF_MS ? null : fetchInto(app, clientId, entry);
  if (!opts.unknownKid) return entry.keys;
  return sinceAttempt < JWKS_REFETCH_MS ? null : fetchInto(app, clientId, entry);
}
