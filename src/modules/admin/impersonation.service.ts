import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { type Actor, bannedUser, getUser, isAdminUser, isBanActive, issueSession, recordAudit, type RequestInfo, type ResolvedSession, resolveSession, revokeOwnSession, userChanged, userRow } from "../../core/index.ts";

export interface ImpersonateInput {
  userId: string;
  /** The caller holds `user: ["impersonate-admins"]` (checked by the router). */
  mayImpersonateAdmins: boolean;
}

/**
 * A session of the target carrying `impersonatedBy`, short-lived (admin.impersonationSessionDuration),
 * never extended, hidden from the target's own list-sessions. Its start is audited in the same
 * transaction, with the admin as impersonator.
 */
export async function impersonateUser(app: App, em: EntityManager, actor: Actor & { userId: string }, req: RequestInfo, input: ImpersonateInput) {
  // No nesting: stop-impersonating hands back the session of whoever started the impersonation,
  // which from inside another impersonation would be a full session of the impersonated admin.
  if (actor.impersonatorId) {
    throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS", { message: "Stop impersonating before impersonating someone else" });
  }
  const target = await getUser(em, input.userId);
  if (isAdminUser(app.config.admin, target) && !input.mayImpersonateAdmins) throw new AuthError("YOU_CANNOT_IMPERSONATE_ADMINS");
  const now = app.clock.now();
  // Impersonation is a way to get a session: a banned target answers like every sign-in.
  if (isBanActive({ banned: target.banned, banExpires: target.banExpires ?? null }, now)) throw bannedUser(app);
  const durationSec = app.config.admin.impersonationSessionDuration;
  // An expired ban lifts itself at the next session, as at sign-in.
  const liftsBan = target.banned;
  const issued = await inTransaction(em, async (tx) => {
    if (liftsBan) await tx.nativeUpdate(User, { id: target.id }, { banned: false, banReason: null, banExpires: null, updatedAt: now });
    const issued = await issueSession(app, tx, req, { userId: target.id, rememberMe: false, impersonatedBy: actor.userId, expiresInSec: durationSec });
    await recordAudit(tx, app.clock, actor, {
      action: "impersonate-user",
      targetType: "user",
      targetId: target.id,
      impersonatorId: actor.userId,
      metadata: { sessionId: issued.session.id, expiresAt: issued.session.expiresAt.toISOString() },
    });
    return issued;
  });
  userChanged(app, em, target.id);
  const user = liftsBan ? { ...userRow(target), banned: false, banReason: null, banExpires: null, updatedAt: now } : target;
  return { issued, user };
}

export type Restored =
  /** The admin's own session, from the admin_session cookie: set back as the session cookie. */
  | { kind: "restored"; token: string; auth: ResolvedSession }
  /** No admin_session cookie naming a live session of that admin (bearer clients): nothing to hand back. */
  | { kind: "ended" };

/**
 * Ends the impersonation session and hands the admin back their own session, only from the
 * admin_session cookie the request carries, when it is a live, ordinary session of the admin
 * who impersonated (docs/wire-contract.md §6). It never mints a new admin session: a leaked
 * impersonation token must not turn into a 7-day session of the admin. A bearer client keeps
 * its own admin token and just drops the impersonation one.
 */
export async function stopImpersonating(
  app: App,
  em: EntityManager,
  req: RequestInfo,
  auth: ResolvedSession,
  adminToken: string | null,
): Promise<Restored> {
  const adminId = auth.session.impersonatedBy;
  if (!adminId) throw new AuthError("NOT_IMPERSONATING");
  const own = adminToken ? await resolveSession(app, adminToken) : null;
  const kept = own && own.user.id === adminId && !own.session.impersonatedBy ? own : null;
  const actor: Actor = { userId: auth.user.id, impersonatorId: adminId, ip: req.ip, userAgent: req.userAgent };
  await inTransaction(em, async (tx) => {
    await revokeOwnSession(app, tx, auth.user.id, { id: auth.session.id });
    await recordAudit(tx, app.clock, actor, {
      action: "stop-impersonating",
      targetType: "user",
      targetId: auth.user.id,
      metadata: { sessionId: auth.session.id, restored: kept ? "admin_session" : "none" },
    });
  });
  if (!kept) return { kind: "ended" };
  return { kind: "restored", token: adminToken!, auth: kept };
}
