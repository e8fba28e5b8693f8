import { describe, expect, it } from "vitest";
import type { SessionWithUser } from "../../db/session-store/index.ts";
import { MAX_MEMBERSHIPS_PER_ENTRY, SessionCache } from "./cache.ts";

function row(userId: string, sessionId: string): SessionWithUser {
  const d = new Date(0);
  return {
    session: { id: sessionId, userId, expiresAt: d, rememberMe: true, ipAddress: null, userAgent: null, impersonatedBy: null, createdAt: d, updatedAt: d, activeOrganizationId: null, activeTeamId: null },
    user: { id: userId, name: "n", email: "e@x.io", emailVerified: false, image: null, username: null, displayUsername: null, role: "user", banned: false, banReason: null, banExpires: null,
    twoFactorEnabled: false, createdAt: d, updatedAt: d },
  };
}

describe("SessionCache", () => {
  it("expires entries after the TTL", () => {
    const cache = new SessionCache(1000);
    cache.set("a", row("u1", "s1"), 0, "token-a");
    expect(cache.get("a", 999)).toBeDefined();
    expect(cache.get("a", 1000)).toBeUndefined();
  });

  it("evicts every digest of a user, and only that user's", () => {
    const cache = new SessionCache(1000);
    cache.set("a", row("u1", "s1"), 0, "token-a");
    cache.set("b", row("u1", "s2"), 0, "token-b");
    cache.set("c", row("u2", "s3"), 0, "token-c");
    cache.evictUser("u1");
    expect(cache.get("a", 1)).toBeUndefined();
    expect(cache.get("b", 1)).toBeUndefined();
    expect(cache.get("c", 1)).toBeDefined();
  });

  it("stores nothing when disabled, and stays bounded", () => {
    const off = new SessionCache(0);
    off.set("a", row("u1", "s1"), 0, "token-a");
    expect(off.get("a", 0)).toBeUndefined();
    const small = new SessionCache(1000, 2);
    small.set("a", row("u1", "s1"), 0, "token-a");
    small.set("b", row("u2", "s2"), 0, "token-b");
    small.set("c", row("u3", "s3"), 0, "token-c");
    expect(small.get("a", 1)).toBeUndefined();
    expect(small.get("c", 1)).toBeDefined();
  });

  it("serializes the get-session body once, with ISO dates", () => {
    const cache = new SessionCache(1000);
    const entry = cache.set("a", row("u1", "s1"), 0, "token-a");
    expect(entry.body.session.expiresAt).toBe("1970-01-01T00:00:00.000Z");
    expect(entry.body.user.banExpires).toBeNull();
    expect(entry.body.session.token).toBe("token-a");
  });

  it("keeps the most recently used entries when full", () => {
    const cache = new SessionCache(1000, 2);
    cache.set("a", row("u1", "s1"), 0, "token-a");
    cache.set("b", row("u2", "s2"), 0, "token-b");
    expect(cache.get("a", 1)).toBeDefined(); // "b" is now the least recently used
    cache.set("c", row("u3", "s3"), 0, "token-c");
    expect(cache.get("b", 1)).toBeUndefined();
    expect(cache.get("a", 1)).toBeDefined();
    expect(cache.get("c", 1)).toBeDefined();
    expect(cache.size).toBe(2);
  });

  it("does not store what a lookup read while an eviction happened (it may predate the revoking commit)", () => {
    const cache = new SessionCache(1000);
    const before = cache.generation;
    cache.evictUser("u1"); // a revoke committed while the lookup was in flight
    const entry = cache.set("a", row("u1", "s1"), 0, "token-a", before);
    expect(entry.json).toContain("token-a"); // the answer is still built for the request in flight
    expect(cache.get("a", 1)).toBeUndefined();
    cache.set("a", row("u1", "s1"), 0, "token-a", cache.generation);
    expect(cache.get("a", 1)).toBeDefined();
  });

  it("tells other instances what it evicted, and applies theirs without echoing them", () => {
    const cache = new SessionCache(1000);
    const sent: unknown[] = [];
    cache.publish = (msg) => sent.push(msg);
    cache.set("a", row("u1", "s1"), 0, "token-a");
    cache.set("b", row("u2", "s2"), 0, "token-b");
    cache.evictDigest("a");
    cache.evictUser("u9");
    expect(sent).toEqual([{ digests: ["a"] }, { users: ["u9"] }]);
    cache.apply({ users: ["u2"] });
    expect(cache.get("b", 1)).toBeUndefined();
    expect(sent).toHaveLength(2);
  });

  it("writes the JSON and its byte length once per entry", () => {
    const cache = new SessionCache(1000);
    const entry = cache.set("a", { ...row("u1", "s1"), user: { ...row("u1", "s1").user, name: "Zoë" } }, 0, "token-a");
    expect(JSON.parse(entry.json)).toEqual(entry.body);
    expect(entry.bytes).toBe(Buffer.byteLength(entry.json));
    expect(entry.bytes).toBeGreaterThan(entry.json.length);
  });

  it(`an entry remembers at most ${MAX_MEMBERSHIPS_PER_ENTRY} memberships: probing organization ids cannot grow it`, () => {
    const entry = new SessionCache(1000).set("a", row("u1", "s1"), 0, "token-a");
    expect(entry.membership("org-0")).toBeUndefined();
    entry.rememberMembership("org-0", { id: "m", role: "owner", createdAt: new Date(0) });
    for (let i = 1; i < MAX_MEMBERSHIPS_PER_ENTRY * 3; i++) entry.rememberMembership(`org-${i}`, null);
    const remembered = Array.from({ length: MAX_MEMBERSHIPS_PER_ENTRY * 3 }, (_, i) => entry.membership(`org-${i}`)).filter((m) => m !== undefined);
    expect(remembered.length).toBeGreaterThan(0);
    expect(remembered.length).toBeLessThanOrEqual(MAX_MEMBERSHIPS_PER_ENTRY);
    // The newest answer is there; the first was dropped when the entry started over.
    expect(entry.membership(`org-${MAX_MEMBERSHIPS_PER_ENTRY * 3 - 1}`)).toBeNull();
    expect(entry.membership("org-0")).toBeUndefined();
  });

  it("evictAll empties the cache and tells the other instances", () => {
    const cache = new SessionCache(1000);
    const heard: unknown[] = [];
    cache.publish = (msg) => heard.push(msg);
    cache.set("a", row("u1", "s1"), 0, "token-a");
    cache.set("b", row("u2", "s2"), 0, "token-b");
    cache.evictAll();
    expect(cache.size).toBe(0);
    expect(heard).toEqual([{ all: true }]);
  });
});
