import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Session, type ISession } from "../../db/entities/index.ts";
import { afterCommit } from "../../db/transaction.ts";
import { isUuid } from "../ids.ts";
import { sessionRefOf } from "./handles.ts";

/*
 * THE writes that end sessions, and the only code that evicts the session cache: each delete
 * evicts at once (so a lookup racing with it re-reads) and again once its transaction has
 * committed (so a lookup that read the row before the commit cannot keep it cached), on this
 * instance and, through the invalidation channel, on every other (docs/architecture.md
 * "The kernel"). A revocation without its eviction cannot be written.
 */

const evictUser = (app: App, em: EntityManager, userId: string) => {
  app.sessionCache.evictUser(userId);
  afterCommit(em, () => app.sessionCache.evictUser(userId));
};

/**
 * The user row changed (name, email, role, ban, verification, two-factor...): cached sessions
 * carry the row, so every one of the user's goes, now and after the commit.
 */
export function userChanged(app: App, em: EntityManager, userId: string): void {
  evictUser(app, em, userId);
}

/**
 * Organization memberships changed (added, re-roled, removed; "all": an organization deleted, its
 * members beyond listing): cached sessions remember their memberships (memberships.ts), so the
 * users' entries go, now and after the commit, here and on every other instance.
 */
export function membershipsChanged(app: App, em: EntityManager, users: readonly string[] | "all"): void {
  if (users === "all") {
    app.sessionCache.evictAll();
    afterCommit(em, () => app.sessionCache.evictAll());
    return;
  }
  for (const userId of users) evictUser(app, em, userId);
}

/** An API key was disabled, changed or deleted: the principal cached under its digest goes (api-key-principal.ts). */
export function apiKeyChanged(app: App, em: EntityManager, keyHash: string): void {
  app.sessionCache.evictDigest(keyHash);
  afterCommit(em, () => app.sessionCache.evictDigest(keyHash));
}

/** Sign-out: the session its token names. */
export async function endSessionByTokenHash(app: App, em: EntityManager, tokenHash: string): Promise<number> {
  const deleted = await em.nativeDelete(Session, { tokenHash });
  app.sessionCache.evictDigest(tokenHash);
  afterCommit(em, () => app.sessionCache.evictDigest(tokenHash));
  return deleted;
}

/** One session, as an admin names it (revoke-user-session). */
export async function endSession(app: App, em: EntityManager, session: Pick<ISession, "id" | "tokenHash">): Promise<void> {
  await em.nativeDelete(Session, { id: session.id });
  app.sessionCache.evictDigest(session.tokenHash);
  afterCommit(em, () => app.sessionCache.evictDigest(session.tokenHash));
}

/**
 * Revokes one of the user's own sessions, by raw token, revocation handle (handles.ts) or id.
 * Someone else's session is simply not found: the user filter is part of the delete.
 */
export async function revokeOwnSession(app: App, em: EntityManager, userId: string, ref: { token?: string | undefined; id?: string | undefined }) {
  const target = ref.token ? sessionRefOf(app, ref.token) : ref.id ? { id: ref.id } : null;
  let deleted = 0;
  if (target && "tokenHash" in target) deleted = await em.nativeDelete(Session, { user: userId, tokenHash: target.tokenHash });
  // Anything but a UUID names no session (and PostgreSQL would reject it as a uuid).
  else if (target && isUuid(target.id)) deleted = await em.nativeDelete(Session, { user: userId, id: target.id });
  evictUser(app, em, userId);
  return deleted;
}

/**
 * "Sign out everywhere" (revoke-sessions, revoke-other-sessions, change-password with
 * revokeOtherSessions, admin revoke-user-sessions, ban, reset, takeover, deletion): ends what a
 * session-holder could still finish as well as the sessions. What that is besides sessions, each
 * family says in the holdings registry (core/holdings.ts `signedOutEverywhere`): pending
 * two-factor sign-ins and trusted devices, claimed or approved device codes (RFC 8628 §3.5:
 * invalid_grant once gone). Those go first and sessions last, so an exchange that commits
 * meanwhile is caught by the session delete (docs/security.md "Sign out everywhere").
 */
export async function revokeAllSessions(app: App, em: EntityManager, userId: string, exceptSessionId?: string) {
  for (const holding of app.registry.holdings) await holding.signedOutEverywhere?.(app, em, userId);
  const deleted = await em.nativeDelete(Session, exceptSessionId ? { user: userId, id: { $ne: exceptSessionId } } : { user: userId });
  evictUser(app, em, userId);
  return deleted;
}

/**
 * Ends the impersonations `adminId` started (ban, removal, deletion, or losing
 * `user: ["impersonate"]`): those sessions carry the admin's authority. Returns their targets.
 */
export async function endImpersonationsBy(app: App, em: EntityManager, adminId: string): Promise<string[]> {
  const impersonations = await em.find(Session, { impersonatedBy: adminId }, { fields: ["id", "user"] });
  if (impersonations.length === 0) return [];
  await em.nativeDelete(Session, { id: { $in: impersonations.map((s) => s.id) } });
  const targets = [...new Set(impersonations.map((s) => s.user.id))];
  for (const id of targets) evictUser(app, em, id);
  return targets;
}

/** Every session that acts as the user: their own, and the impersonations they started (ban, removal). */
export async function endSessionsOf(app: App, em: EntityManager, userId: string): Promise<void> {
  await revokeAllSessions(app, em, userId);
  await endImpersonationsBy(app, em, userId);
}

export async function listActiveSessions(app: App, em: EntityManager, userId: string): Promise<ISession[]> {
  return em.find(Session, { user: userId, expiresAt: { $gt: app.clock.now() }, impersonatedBy: null }, { orderBy: { createdAt: "desc" } });
}
