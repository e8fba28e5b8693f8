import type { MembershipRow, SessionWithUser } from "../../db/session-store/index.ts";
import { sessionBody, sessionJson, type SessionBody } from "./view.ts";

/** Organizations whose membership one entry remembers at most (more, and it starts over): probing ids cannot grow it. */
export const MAX_MEMBERSHIPS_PER_ENTRY = 16;

/** A resolved session and its get-session answer, serialized once (an uncached check builds one per request). */
export class SessionEntry {
  /** `body` serialized: what the REST bridge writes for a get-session answer. */
  readonly json: string;
  /** Its length in bytes (the content-length). */
  readonly bytes: number;
  private built: SessionBody | undefined;
  /** The user's memberships looked up while this entry was cached, by organization id; null: not a member (memberships.ts). */
  private members: Map<string, MembershipRow | null> | undefined;

  constructor(
    readonly value: SessionWithUser,
    /** The presented token, echoed as `session.token` (docs/wire-contract.md §2); in memory only, like the request that carried it. */
    private readonly token: string,
    readonly cachedAtMs: number,
  ) {
    this.json = sessionJson(value, token);
    this.bytes = Buffer.byteLength(this.json);
  }

  /** The get-session body as an object, for the tRPC procedures; built on first use (the REST bridge writes `json`). */
  get body(): SessionBody {
    return (this.built ??= sessionBody(this.value, this.token));
  }

  /** The remembered membership of the organization: the row, null (none), or undefined (not looked up). */
  membership(organizationId: string): MembershipRow | null | undefined {
    return this.members?.get(organizationId);
  }

  /** Remembers a lookup's answer for as long as the entry lives (the cache evicts it with the user's sessions). */
  rememberMembership(organizationId: string, row: MembershipRow | null): void {
    this.members ??= new Map();
    if (this.members.size >= MAX_MEMBERSHIPS_PER_ENTRY) this.members.clear();
    this.members.set(organizationId, row);
  }
}

/** An eviction as other instances (workers, processes) hear of it: token digests, user ids, or everything. */
export type Invalidation = { digests: string[] } | { users: string[] } | { all: true };

/**
 * Short-lived, bounded, in-process cache of resolved sessions keyed by the token's digest, with
 * their serialized answer (docs/performance.md). Expiry and bans are still checked on every hit;
 * every write that revokes a session or changes a user evicts it here, after its commit, and
 * tells the other instances through `publish` (invalidation.ts). Least recently used entries go
 * first when `maxEntries` is reached. Off (ttlMs 0) unless the config enables it.
 *
 * A lookup that was in flight while an eviction happened must not store what it read: it may
 * have read the row before the revoking write committed. `generation` moves on every eviction;
 * `set()` stores only when it is still the one the lookup started with.
 */
export class SessionCache {
  private readonly byDigest = new Map<string, SessionEntry>();
  private readonly byUser = new Map<string, Set<string>>();
  private gen = 0;
  /** The invalidation channel is down: evictions elsewhere would go unheard, so nothing is kept. */
  private suspended = false;
  /** Set by the invalidation channel: tells other instances what this one evicted. */
  publish: ((msg: Invalidation) => void) | null = null;
  /** Lookups answered here / not (GET /metrics reads them; two integer increments per check). */
  hits = 0;
  misses = 0;

  constructor(
    readonly ttlMs: number,
    readonly maxEntries = 10_000,
  ) {}

  get enabled(): boolean {
    return this.ttlMs > 0 && !this.suspended;
  }

  /** Empties the cache and keeps nothing until resume() (the invalidation channel is down). */
  suspend(): void {
    this.suspended = true;
    this.apply({ all: true });
  }

  /** The channel is back: start again, empty (what was evicted meanwhile is unknown). */
  resume(): void {
    this.apply({ all: true });
    this.suspended = false;
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** Read before a database lookup; hand it to set() after. */
  get generation(): number {
    return this.gen;
  }

  get(digest: string, nowMs: number): SessionEntry | undefined {
    const entry = this.byDigest.get(digest);
    if (!entry) {
      this.misses++;
      return undefined;
    }
    if (nowMs - entry.cachedAtMs >= this.ttlMs || nowMs < entry.cachedAtMs) {
      this.dropDigest(digest);
      this.misses++;
      return undefined;
    }
    this.hits++;
    // Most recently used last: Map keeps insertion order, so the first key is the LRU one.
    this.byDigest.delete(digest);
    this.byDigest.set(digest, entry);
    return entry;
  }

  /**
   * The entry for a looked-up row; stored only when the cache is on and nothing was evicted
   * since `generation` was read. `token`: the raw token whose digest is `digest` (kept in memory
   * only, like the request that carried it).
   */
  set(digest: string, value: SessionWithUser, nowMs: number, token: string, generation = this.gen): SessionEntry {
    const entry = new SessionEntry(value, token, nowMs);
    if (!this.enabled || generation !== this.gen) return entry;
    this.dropDigest(digest);
    while (this.byDigest.size >= this.maxEntries) {
      const oldest = this.byDigest.keys().next().value;
      if (oldest === undefined) break;
      this.dropDigest(oldest);
    }
    this.byDigest.set(digest, entry);
    let digests = this.byUser.get(value.user.id);
    if (!digests) this.byUser.set(value.user.id, (digests = new Set()));
    digests.add(digest);
    return entry;
  }

  /** One session (sign-out, revoke): here and on every other instance. */
  evictDigest(digest: string): void {
    this.apply({ digests: [digest] });
    this.publish?.({ digests: [digest] });
  }

  /** Every session of a user (revoke all, ban, any change to the user row): here and on every other instance. */
  evictUser(userId: string): void {
    this.apply({ users: [userId] });
    this.publish?.({ users: [userId] });
  }

  /** Every session (a change that touches users beyond counting, an organization's deletion): here and on every other instance. */
  evictAll(): void {
    this.apply({ all: true });
    this.publish?.({ all: true });
  }

  /** Evicts what another instance reported (or everything): locally only, never re-published. */
  apply(msg: Invalidation): void {
    this.gen++;
    if ("all" in msg) {
      this.byDigest.clear();
      this.byUser.clear();
      return;
    }
    if ("digests" in msg) {
      for (const digest of msg.digests) this.dropDigest(digest);
      return;
    }
    for (const userId of msg.users) {
      const digests = this.byUser.get(userId);
      if (!digests) continue;
      for (const digest of digests) this.byDigest.delete(digest);
      this.byUser.delete(userId);
    }
  }

  clear(): void {
    this.apply({ all: true });
  }

  private dropDigest(digest: string): void {
    const entry = this.byDigest.get(digest);
    if (!entry) return;
    this.byDigest.delete(digest);
    const digests = this.byUser.get(entry.value.user.id);
    digests?.delete(digest);
    if (digests?.size === 0) this.byUser.delete(entry.value.user.id);
  }
}
