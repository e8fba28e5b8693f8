import { LockMode } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Session, User, type ISession, type IUser } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { publicSession } from "../../core/session/view.ts";
import { endImpersonationsBy, revokeAllSessions } from "../../core/session/sessions.ts";
import { listedToken, sessionRefOf } from "../../core/session/handles.ts";
import { recordAudit, type Actor } from "./audit.service.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids come from callers: anything but a UUID is simply not found (PostgreSQL would reject it). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** `lock`: FOR UPDATE on PostgreSQL, for a transaction that changes the user (SQLite ignores it: one writer at a time). */
export async function findUser(em: EntityManager, id: string, lock = false): Promise<IUser | null> {
  return isUuid(id) ? em.findOne(User, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) : null;
}

export async function getUser(em: EntityManager, id: string, lock = false): Promise<IUser> {
  const user = await findUser(em, id, lock);
  if (!user) throw new AuthError("USER_NOT_FOUND");
  return user;
}

export function sessionOut(s: ISession) {
  return publicSession({
    ...s,
    userId: s.user.id,
    ipAddress: s.ipAddress ?? null,
    userAgent: s.userAgent ?? null,
    impersonatedBy: s.impersonatedBy ?? null,
  });
}

/**
 * Every session that acts as the user: their own, and the impersonations they started (those
 * carry the user's authority too). Ban and removal end both. Returns the users whose cached
 * sessions the caller evicts again once its transaction commits.
 */
export async function endSessionsOf(app: App, em: EntityManager, userId: string): Promise<string[]> {
  await revokeAllSessions(app, em, userId);
  return [...new Set([userId, ...(await endImpersonationsBy(app, em, userId))])];
}

export { endImpersonationsBy };

/**
 * Admin view: every live session of the user, impersonations included (they show `impersonatedBy`).
 * An unknown user simply has none (better-auth's admin plugin answers `{ sessions: [] }` too).
 */
export async function listUserSessions(app: App, em: EntityManager, userId: string, caller: { sessionId: string; token: string | null }) {
  if (!isUuid(userId)) return [];
  const sessions = await em.find(
    Session,
    { user: userId, expiresAt: { $gt: app.clock.now() } },
    { orderBy: { createdAt: "desc" } },
  );
  // `token`: a revocation handle (the caller's own raw token for its own session): CONTRACT.md §2.
  return sessions.map((s) => ({ ...sessionOut(s), token: listedToken(app, s.id, caller) }));
}

export interface SessionRef {
  sessionToken?: string | undefined;
  sessionId?: string | undefined;
}

export async function revokeUserSession(app: App, em: EntityManager, actor: Actor, ref: SessionRef): Promise<void> {
  const named = ref.sessionToken ? sessionRefOf(app, ref.sessionToken) : { id: ref.sessionId ?? "" };
  const where = "tokenHash" in named ? named : isUuid(named.id) ? named : null;
  const session = where ? await em.findOne(Session, where) : null;
  if (!session) throw new AuthError("SESSION_NOT_FOUND");
  await inTransaction(em, async (tx) => {
    await tx.nativeDelete(Session, { id: session.id });
    await recordAudit(tx, app.clock, actor, {
      action: "revoke-user-session",
      targetType: "session",
      targetId: session.id,
      metadata: { userId: session.user.id },
    });
  });
  app.sessionCache.evictDigest(session.tokenHash);
}

/**
 * Succeeds for an unknown user too, with nothing to revoke (better-auth's admin plugin answers
 * `{ success: true }`); the attempt is still an admin action, so it is audited all the same.
 */
export async function revokeUserSessions(app: App, em: EntityManager, actor: Actor, userId: string): Promise<void> {
  await inTransaction(em, async (tx) => {
    const deleted = isUuid(userId) ? await revokeAllSessions(app, tx, userId) : 0;
    await recordAudit(tx, app.clock, actor, {
      action: "revoke-user-sessions",
      targetType: "user",
      targetId: userId,
      metadata: { revoked: deleted },
    });
  });
  app.sessionCache.evictUser(userId);
}
