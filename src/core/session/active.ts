import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Session } from "../../db/entities/index.ts";
import { userChanged } from "./revoke.ts";

/*
 * The session's active organization and team (docs/organizations.md): written here only, each
 * write with the cache eviction of the sessions it changed (revoke.ts userChanged), so get-session
 * never shows an organization the session left.
 */

/** set-active, set-active-team, create: the caller's own session works in `organizationId` (and `teamId`). */
export async function setActiveContext(app: App, em: EntityManager, session: { id: string; userId: string }, organizationId: string | null, teamId: string | null): Promise<void> {
  await em.nativeUpdate(Session, { id: session.id }, { activeOrganizationId: organizationId, activeTeamId: teamId });
  userChanged(app, em, session.userId);
}

/** Sessions working in `organizationId` (of `userId` only: a removed member; every one: a deleted organization) work in none. */
export async function clearActiveOrganization(app: App, em: EntityManager, organizationId: string, userId?: string): Promise<void> {
  const where = { activeOrganizationId: organizationId, ...(userId ? { user: userId } : {}) };
  const users = userId ? [userId] : [...new Set((await em.find(Session, where, { fields: ["user"] })).map((s) => s.user.id))];
  await em.nativeUpdate(Session, where, { activeOrganizationId: null, activeTeamId: null });
  for (const id of users) userChanged(app, em, id);
}

/** Sessions working in `teamId` (of `userId` only: a removed team member; every one: a removed team) work in no team. */
export async function clearActiveTeam(app: App, em: EntityManager, teamId: string, userId?: string): Promise<void> {
  const where = { activeTeamId: teamId, ...(userId ? { user: userId } : {}) };
  const users = userId ? [userId] : [...new Set((await em.find(Session, where, { fields: ["user"] })).map((s) => s.user.id))];
  await em.nativeUpdate(Session, where, { activeTeamId: null });
  for (const id of users) userChanged(app, em, id);
}
