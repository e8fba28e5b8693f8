import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { AuthError } from "../../errors.ts";
import { DeviceCode, Session, TwoFactorChallenge, type ISession } from "../../db/entities/index.ts";
import type { MaybePromise, SessionRow, SessionWithUser } from "../../db/session-store/index.ts";
import type { SessionEntry } from "./cache.ts";
import { sessionRefOf } from "./handles.ts";

export interface RequestInfo {
  ip: string | null;
  userAgent: string | null;
}

export interface IssuedSession {
  /** The raw token: shown once, never stored. */
  token: string;
  session: SessionRow;
  /** Cookie Max-Age in seconds; null for a browser-session cookie (rememberMe: false). */
  cookieMaxAgeSec: number | null;
}

export interface IssueOptions {
  userId: string;
  rememberMe?: boolean;
  impersonatedBy?: string | null;
  expiresInSec?: number;
}

export interface NewSession extends IssuedSession {
  /** SHA-256 of the token: the only form of it the database keeps. */
  tokenHash: string;
}

/** A new session, not written yet: its row, token and digest (issueSession writes it; so does password sign-in's one statement). */
export function newSession(app: App, req: RequestInfo, opts: IssueOptions): NewSession {
  const now = app.clock.now();
  const rememberMe = opts.rememberMe ?? true;
  const ttlSec =
    opts.expiresInSec ?? (rememberMe ? app.config.session.expiresInSec : app.config.session.shortExpiresInSec);
  const token = randomToken();
  const session: SessionRow = {
    id: randomUUID(),
    userId: opts.userId,
    expiresAt: new Date(now.getTime() + ttlSec * 1000),
    rememberMe,
    ipAddress: req.ip?.slice(0, 64) ?? null,
    userAgent: req.userAgent?.slice(0, 1024) ?? null,
    impersonatedBy: opts.impersonatedBy ?? null,
    createdAt: now,
    updatedAt: now,
  };
  return { token, tokenHash: sha256(token), session, cookieMaxAgeSec: rememberMe ? ttlSec : null };
}

/**
 * Writes a new session at once (inside the caller's transaction when `em` is one). A native
 * insert, not the unit of work: a third of the cost on the sign-in path (bench/README).
 */
export async function issueSession(app: App, em: EntityManager, req: RequestInfo, opts: IssueOptions): Promise<IssuedSession> {
  const { tokenHash, ...issued } = newSession(app, req, opts);
  const { userId, ...columns } = issued.session;
  await em.insert(Session, { ...columns, user: userId, tokenHash });
  return issued;
}

export interface ResolvedSession extends SessionWithUser {
  /** True when this request moved the sliding expiry (the cookie is re-sent). */
  extended: boolean;
  /** The get-session answer (and its JSON), serialized once per cache entry. */
  entry: SessionEntry;
}

/** The answer of every sign-in path to a banned user, with the operator's message (CONTRACT.md §3). */
export function bannedUser(app: App): AuthError {
  return new AuthError("BANNED_USER", { message: app.config.admin.bannedUserMessage });
}

export function isBanActive(user: { banned: boolean; banExpires: Date | null }, now: Date): boolean {
  return user.banned && (user.banExpires === null || user.banExpires.getTime() > now.getTime());
}

/**
 * The per-request session check: one prepared lookup, no write unless the sliding window moves
 * (CONTRACT.md §3: more than `updateAge` since the last extension, remember-me sessions only).
 * Synchronous when the answer is cached or the store answers at once (SQLite): no promise, no
 * microtask on the hot path.
 */
export function resolveSession(app: App, token: string): MaybePromise<ResolvedSession | null> {
  if (token.length < 20 || token.length > 200) return null;
  const digest = sha256(token);
  const now = app.clock.now();
  const cached = app.sessionCache.get(digest, now.getTime());
  if (cached) return settle(app, digest, token, cached, now);
  const generation = app.sessionCache.generation;
  const found = app.sessions.findByTokenHash(digest);
  const store = (row: SessionWithUser | null) =>
    row ? settle(app, digest, token, app.sessionCache.set(digest, row, now.getTime(), token, generation), now) : null;
  return found instanceof Promise ? found.then(store) : store(found);
}

function settle(app: App, digest: string, token: string, entry: SessionEntry, now: Date): MaybePromise<ResolvedSession | null> {
  const nowMs = now.getTime();
  const { session, user } = entry.value;
  if (session.expiresAt.getTime() <= nowMs || isBanActive(user, now)) {
    app.sessionCache.evictDigest(digest);
    return null;
  }
  const { expiresInSec, updateAgeSec } = app.config.session;
  const lastExtendedMs = session.expiresAt.getTime() - expiresInSec * 1000;
  if (!session.rememberMe || session.impersonatedBy || nowMs - lastExtendedMs <= updateAgeSec * 1000) {
    return { session, user, entry, extended: false };
  }
  const expiresAt = new Date(nowMs + expiresInSec * 1000);
  const generation = app.sessionCache.generation;
  const moved = (): ResolvedSession => {
    const next = app.sessionCache.set(digest, { user, session: { ...session, expiresAt, updatedAt: now } }, nowMs, token, generation);
    return { ...next.value, entry: next, extended: true };
  };
  const written = app.sessions.extend(session.id, expiresAt, now, app.orm);
  return written instanceof Promise ? written.then(moved) : moved();
}

export async function listActiveSessions(app: App, em: EntityManager, userId: string): Promise<ISession[]> {
  return em.find(
    Session,
    { user: userId, expiresAt: { $gt: app.clock.now() }, impersonatedBy: null },
    { orderBy: { createdAt: "desc" } },
  );
}

/*
 * Every write that revokes a session evicts it from the session cache, after the delete, so a
 * concurrent lookup cannot re-cache what was just deleted for longer than the cache TTL.
 */

export async function deleteSessionByTokenHash(app: App, em: EntityManager, tokenHash: string): Promise<number> {
  const deleted = await em.nativeDelete(Session, { tokenHash });
  app.sessionCache.evictDigest(tokenHash);
  return deleted;
}

const SESSION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Revokes one of the user's own sessions, by raw token, revocation handle (session-handle.ts)
 * or id. Someone else's session is simply not found: the user filter is part of the delete.
 */
export async function revokeOwnSession(app: App, em: EntityManager, userId: string, ref: { token?: string | undefined; id?: string | undefined }) {
  const target = ref.token ? sessionRefOf(app, ref.token) : ref.id ? { id: ref.id } : null;
  let deleted = 0;
  if (target && "tokenHash" in target) deleted = await em.nativeDelete(Session, { user: userId, tokenHash: target.tokenHash });
  // Anything but a UUID names no session (and PostgreSQL would reject it as a uuid).
  else if (target && SESSION_ID.test(target.id)) deleted = await em.nativeDelete(Session, { user: userId, id: target.id });
  app.sessionCache.evictUser(userId);
  return deleted;
}

/** The user's pending two-factor sign-ins: each proved a first factor and waits only for the second. */
export async function endPendingSignIns(em: EntityManager, userId: string): Promise<void> {
  await em.nativeDelete(TwoFactorChallenge, { user: userId, kind: "sign-in" });
}

/**
 * "Sign out everywhere" (revoke-sessions, revoke-other-sessions, change-password with
 * revokeOtherSessions, admin revoke-user-sessions, ban, reset, takeover, deletion): ends what a
 * session-holder could still finish as well as the sessions. Approved (and claimed) device codes
 * turn into a session when polled (RFC 8628 §3.5: invalid_grant once gone); pending two-factor
 * sign-ins proved the password and wait for a code; trusted devices skip the second step. Device
 * codes go first and sessions last, so an exchange that commits meanwhile is caught by the
 * session delete (docs/security.md "Sign out everywhere").
 */
export async function revokeAllSessions(app: App, em: EntityManager, userId: string, exceptSessionId?: string) {
  await em.nativeDelete(DeviceCode, { user: userId });
  await em.nativeDelete(TwoFactorChallenge, { user: userId, kind: { $in: ["sign-in", "trusted-device"] } });
  const deleted = await em.nativeDelete(Session, exceptSessionId ? { user: userId, id: { $ne: exceptSessionId } } : { user: userId });
  app.sessionCache.evictUser(userId);
  return deleted;
}

/**
 * Ends the impersonations `adminId` started (ban, removal, deletion, or losing
 * `user: ["impersonate"]`): those sessions carry the admin's authority. Returns their targets,
 * whose cache entries are evicted here and again by the caller after its commit.
 */
export async function endImpersonationsBy(app: App, em: EntityManager, adminId: string): Promise<string[]> {
  const impersonations = await em.find(Session, { impersonatedBy: adminId }, { fields: ["id", "user"] });
  if (impersonations.length === 0) return [];
  await em.nativeDelete(Session, { id: { $in: impersonations.map((s) => s.id) } });
  const targets = [...new Set(impersonations.map((s) => s.user.id))];
  for (const id of targets) app.sessionCache.evictUser(id);
  return targets;
}
