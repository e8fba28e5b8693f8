import type { SessionWithUser } from "../../db/session-store/index.ts";
import { publicSession, publicUser, type PublicSession, type PublicUser } from "./session.serialize.ts";

interface Entry {
  value: SessionWithUser;
  /** The get-session body, serialized once per entry; `session.token` echoes the presented token (CONTRACT.md §2). */
  body: { session: PublicSession & { token: string }; user: PublicUser };
  cachedAtMs: number;
}

/**
 * Short-lived, in-process cache of resolved sessions keyed by the token's digest
 * (PERFORMANCE.md point 4). Expiry and bans are still checked on every hit; every write that
 * revokes a session or changes a user evicts it here, and `ttlMs` bounds what another process
 * sharing the database could miss. Off (ttlMs 0) unless the config enables it.
 */
export class SessionCache {
  private readonly byDigest = new Map<string, Entry>();
  private readonly byUser = new Map<string, Set<string>>();

  constructor(
    readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0;
  }

  get(digest: string, nowMs: number): Entry | undefined {
    const entry = this.byDigest.get(digest);
    if (!entry) return undefined;
    if (nowMs - entry.cachedAtMs >= this.ttlMs || nowMs < entry.cachedAtMs) {
      this.evictDigest(digest);
      return undefined;
    }
    return entry;
  }

  /** `token`: the raw token whose digest is `digest` (kept in memory only, like the request that carried it). */
  set(digest: string, value: SessionWithUser, nowMs: number, token: string): Entry {
    const entry: Entry = {
      value,
      body: { session: { ...publicSession(value.session), token }, user: publicUser(value.user) },
      cachedAtMs: nowMs,
    };
    if (!this.enabled) return entry;
    if (this.byDigest.size >= this.maxEntries) {
      const oldest = this.byDigest.keys().next().value;
      if (oldest !== undefined) this.evictDigest(oldest);
    }
    this.byDigest.set(digest, entry);
    let digests = this.byUser.get(value.user.id);
    if (!digests) this.byUser.set(value.user.id, (digests = new Set()));
    digests.add(digest);
    return entry;
  }

  evictDigest(digest: string): void {
    const entry = this.byDigest.get(digest);
    if (!entry) return;
    this.byDigest.delete(digest);
    const digests = this.byUser.get(entry.value.user.id);
    digests?.delete(digest);
    if (digests?.size === 0) this.byUser.delete(entry.value.user.id);
  }

  /** Every cached session of a user: after a revoke, a ban, or any change to the user row. */
  evictUser(userId: string): void {
    const digests = this.byUser.get(userId);
    if (!digests) return;
    for (const digest of digests) this.byDigest.delete(digest);
    this.byUser.delete(userId);
  }

  clear(): void {
    this.byDigest.clear();
    this.byUser.clear();
  }
}
