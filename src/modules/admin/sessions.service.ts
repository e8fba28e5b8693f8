import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Session, type ISession } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { type Actor, endSession, isUuid, listedToken, publicSession, recordAudit, revokeAllSessions, sessionRefOf } from "../../core/index.ts";

export function sessionOut(s: ISession) {
  return publicSession({
    ...s,
    userId: s.user.id,
    ipAddress: s.ipAddress ?? null,
    userAgent: s.userAgent ?? null,
    impersonatedBy: s.impersonatedBy ?? null,
        activeOrganizationId: s.activeOrganizationId ?? null,
        activeTeamId: s.activeTeamId ?? null,
  });
}


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
  // `token`: a revocation handle (the caller's own raw token for its own session): docs/wire-contract.md §2.
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
    await endSession(app, tx, session);
    await recordAudit(tx, app.clock, actor, {
      action: "revoke-user-session",
      targetType: "session",
      targetId: session.id,
      metadata: { userId: session.user.id },
    });
  });
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
}
