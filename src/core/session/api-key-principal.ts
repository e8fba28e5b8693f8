import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import type { KeyPrincipal, KeyWithUser, MaybePromise } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import { claimKeyUse } from "./api-key-usage.ts";
import type { SessionEntry } from "./cache.ts";
import { isBanActive, type ResolvedSession } from "./sessions.ts";

/*
 * The second kind of principal (docs/machine-access.md "API keys"): a request with the key header
 * acts as the key's owner. It is resolved like a session: one prepared, indexed lookup by the
 * key's SHA-256 (the key joined to its owner), cached in the session cache under that digest, so
 * the revocations that evict sessions (a ban, any change to the user row, the key's own update or
 * delete: revoke.ts `apiKeyChanged`) evict it too, on every instance. Expiry, the owner's ban
 * and the key's limits are checked on every request, cached or not.
 */

/** The key of the request: the first configured header that carries one (better-auth's `apiKeyHeaders`); null without one, or when keys do not authenticate. */
export function readApiKey(app: App, headers: Record<string, string | string[] | undefined>): string | null {
  const config = app.config.apiKey;
  if (!config.enabled || !config.enableSessionForAPIKeys) return null;
  for (const name of config.apiKeyHeaders) {
    const v = headers[name];
    const key = Array.isArray(v) ? v[0] : v;
    if (key) return key;
  }
  return null;
}

/** One answer for every key that authenticates nobody (unknown, disabled, expired, deleted, banned owner): nothing tells them apart. */
const invalid = () => new AuthError("INVALID_API_KEY");

/**
 * The key's owner as a principal, or throws 401 INVALID_API_KEY (429 USAGE_EXCEEDED / RATE_LIMITED
 * when its limits are spent). Synchronous when cached (or on SQLite) and the key has no limits.
 */
export function resolveKeyPrincipal(app: App, key: string): MaybePromise<ResolvedSession> {
  if (key.length < 16 || key.length > 512) throw invalid();
  const digest = sha256(key);
  const now = app.clock.now();
  const cached = app.sessionCache.get(digest, now.getTime());
  if (cached?.value.apiKey) return settle(app, digest, cached, now);
  const generation = app.sessionCache.generation;
  const found = app.sessions.findByApiKeyHash(digest);
  const store = (row: KeyWithUser | null): MaybePromise<ResolvedSession> => {
    if (!row || !row.key.enabled) throw invalid();
    const value = { session: principalSession(app, row.key, now), user: row.user, apiKey: row.key };
    return settle(app, digest, app.sessionCache.set(digest, value, now.getTime(), key, generation), now);
  };
  return found instanceof Promise ? found.then(store) : store(found);
}

/**
 * The session a key-backed request carries (better-auth's shape: the key's id, the key's expiry
 * or the session lifetime). Never remembered, never extended, never fresh (core/step-up.ts).
 */
function principalSession(app: App, key: KeyPrincipal, now: Date) {
  return {
    id: key.id,
    userId: key.userId,
    expiresAt: key.expiresAt ?? new Date(now.getTime() + app.config.session.expiresInSec * 1000),
    rememberMe: false,
    ipAddress: null,
    userAgent: null,
    impersonatedBy: null,
    activeOrganizationId: null,
    activeTeamId: null,
    createdAt: now,
    updatedAt: now,
  };
}

function settle(app: App, digest: string, entry: SessionEntry, now: Date): MaybePromise<ResolvedSession> {
  const { session, user, apiKey } = entry.value;
  const expired = apiKey!.expiresAt !== null && apiKey!.expiresAt.getTime() <= now.getTime();
  if (expired || isBanActive(user, now)) {
    app.sessionCache.evictDigest(digest);
    throw invalid();
  }
  const resolved: ResolvedSession = { session, user, apiKey, entry, extended: false };
  if (!apiKey!.rateLimit && !apiKey!.quota) return resolved;
  return claimKeyUse(app, apiKey!, now).then(() => resolved);
}
