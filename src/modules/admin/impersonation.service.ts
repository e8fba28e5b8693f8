import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Session, User, type IUser } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import {
  isBanActive,
  issueSession,
  resolveSession,
  type IssuedSession,
  type RequestInfo,
  type ResolvedSession,
  bannedUser,
} from "../session/session.service.ts";
import { recordAudit, type Actor } from "./audit.service.ts";
import { assertPermission, isAdminUser } from "./permissions.ts";
import { getUser } from "./sessions.service.ts";

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
  const issued = await em.transactional(async (tx) => {
    if (target.banned) {
      // An expired ban lifts itself at the next session, as at sign-in.
      await tx.nativeUpdate(User, { id: target.id }, { banned: false, banReason: null, banExpires: null, updatedAt: now });
      Object.assign(target, { banned: false, banReason: null, banExpires: null, updatedAt: now });
    }
    const issued = await issueSession(app, tx, req, { userId: target.id, rememberMe: false, impersonatedBy: actor.userId, expiresInSec: durationSec });
    recordAudit(tx, app.clock, actor, {
      action: "impersonate-user",
      targetType: "user",
      targetId: target.id,
      impersonatorId: actor.userId,
      metadata: { sessionId: issued.session.id, expiresAt: issued.session.expiresAt.toISOString() },
    });
    return issued;
  });
  app.sessionCache.evictUser(target.id);
  return { issued, user: target, cookieMaxAgeSec: durationSec };
}

export type Restored =
  /** The admin's own session, from the admin_session cookie: set back as the session cookie. */
  | { kind: "restored"; token: string; auth: ResolvedSession; cookieMaxAgeSec: number | null }
  /** No usable admin_session cookie (bearer clients): a fresh session of the admin. */
  | { kind: "fresh"; issued: IssuedSession; user: IUser };

/**
 * Ends the impersonation session and hands the admin back a session of their own. A fresh one
 * is issued only to an admin who may still impersonate: a leaked impersonation token must not
 * turn into a long-lived session of a demoted or banned admin.
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
  let admin: IUser | null = null;
  if (!kept) {
    admin = await em.findOne(User, { id: adminId });
    if (!admin) throw new AuthError("UNAUTHORIZED");
    if (isBanActive({ banned: admin.banned, banExpires: admin.banExpires ?? null }, app.clock.now())) throw bannedUser(app);
    assertPermission(app.config.admin, admin, "user", ["impersonate"]);
  }
  const actor: Actor = { userId: auth.user.id, impersonatorId: adminId, ip: req.ip, userAgent: req.userAgent };
  const result = await em.transactional(async (tx): Promise<Restored> => {
    await tx.nativeDelete(Session, { id: auth.session.id });
    recordAudit(tx, app.clock, actor, {
      action: "stop-impersonating",
      targetType: "user",
      targetId: auth.user.id,
      metadata: { sessionId: auth.session.id, restored: kept ? "admin_session" : "new-session" },
    });
    if (kept) {
      const remainingSec = Math.floor((kept.session.expiresAt.getTime() - app.clock.now().getTime()) / 1000);
      return { kind: "restored", token: adminToken!, auth: kept, cookieMaxAgeSec: kept.session.rememberMe ? remainingSec : null };
    }
    return { kind: "fresh", issued: await issueSession(app, tx, req, { userId: admin!.id }), user: admin! };
  });
  app.sessionCache.evictUser(auth.user.id);
  return result;
}
