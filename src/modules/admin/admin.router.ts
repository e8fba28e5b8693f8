import type { Context } from "../../trpc/context.ts";
import { authedProcedure, router, withPermission } from "../../trpc/init.ts";
import { handOverSession } from "../../trpc/effects.ts";
import { type Action, actorOf, assertPermission, getUser, hasPermission, publicSession, publicUser, type ResolvedSession, type Resource, sessionCookieMaxAgeSec, userRow } from "../../core/index.ts";
import * as schema from "./admin.schema.ts";
import { exportAuditEvents, listAuditEvents } from "./audit-events.service.ts";
import { readDashboard } from "../../db/dashboard.ts";
import * as bans from "./bans.service.ts";
import * as impersonation from "./impersonation.service.ts";
import { listUsers } from "./list-users.service.ts";
import * as sessions from "./sessions.service.ts";
import * as records from "./user-records.service.ts";
import * as users from "./users.service.ts";

/** Holds the admin's own session token while they impersonate someone (restored by stop-impersonating). */
const ADMIN_SESSION_COOKIE = "admin_session";

type AuthedContext = Context & { auth: ResolvedSession };

/** A second permission some inputs need on top of the procedure's own. */
function alsoNeeds<R extends Resource>(ctx: AuthedContext, resource: R, actions: readonly Action<R>[]) {
  assertPermission(ctx.app.config.admin, ctx.auth.user, resource, actions);
}

const userOut = (u: Parameters<typeof userRow>[0]) => publicUser(userRow(u));
const actor = (ctx: AuthedContext) => actorOf(ctx.auth, ctx.req);

/**
 * THE table of who may do what (docs/wire-contract.md §6): each procedure's permission is its first
 * line; the few inputs that need one more say so right below it.
 */
export const adminRouter = router({
  createUser: withPermission("user", ["create"])
    .input(schema.createUserInput)
    .mutation(async ({ ctx, input }) => {
      if (input.role !== undefined || input.data?.role !== undefined) alsoNeeds(ctx, "user", ["set-role"]);
      return { user: userOut(await users.createUser(ctx.app, ctx.em, actor(ctx), input)) };
    }),

  getUser: withPermission("user", ["get"])
    .input(schema.getUserInput)
    .query(async ({ ctx, input }) => userOut(await getUser(ctx.em, input.id))),

  updateUser: withPermission("user", ["update"])
    .input(schema.updateUserInput)
    .mutation(async ({ ctx, input }) => {
      const { data } = input;
      if (data.role !== undefined) alsoNeeds(ctx, "user", ["set-role"]);
      if (data.email !== undefined || data.emailVerified !== undefined) alsoNeeds(ctx, "user", ["set-email"]);
      if (data.banned !== undefined || data.banReason !== undefined || data.banExpires !== undefined) alsoNeeds(ctx, "user", ["ban"]);
      return userOut(await users.updateUser(ctx.app, ctx.em, actor(ctx), input.userId, data));
    }),

  setRole: withPermission("user", ["set-role"])
    .input(schema.setRoleInput)
    .mutation(async ({ ctx, input }) => ({
      user: userOut(await users.setRole(ctx.app, ctx.em, actor(ctx), input.userId, input.role)),
    })),

  listUsers: withPermission("user", ["list"])
    .input(schema.listUsersInput)
    .query(({ ctx, input }) => listUsers(ctx.app, ctx.em, input)),

  // A key must not become a password, not even someone else's (docs/machine-access.md).
  setUserPassword: withPermission("user", ["set-password"], { account: true })
    .input(schema.setUserPasswordInput)
    .mutation(async ({ ctx, input }) => {
      await users.setUserPassword(ctx.app, ctx.em, actor(ctx), input.userId, input.newPassword);
      return { status: true as const };
    }),

  removeUser: withPermission("user", ["delete"])
    .input(schema.userIdInput)
    .mutation(async ({ ctx, input }) => {
      await users.removeUser(ctx.app, ctx.em, actor(ctx), input.userId);
      return { success: true as const };
    }),

  banUser: withPermission("user", ["ban"])
    .input(schema.banUserInput)
    .mutation(async ({ ctx, input }) => ({ user: userOut(await bans.banUser(ctx.app, ctx.em, actor(ctx), input)) })),

  unbanUser: withPermission("user", ["ban"])
    .input(schema.userIdInput)
    .mutation(async ({ ctx, input }) => ({ user: userOut(await bans.unbanUser(ctx.app, ctx.em, actor(ctx), input.userId)) })),

  impersonateUser: withPermission("user", ["impersonate"], { account: true })
    .input(schema.userIdInput)
    .mutation(async ({ ctx, input }) => {
      // Admin targets also need impersonate-admins (decided once the target is loaded).
      const mayImpersonateAdmins = hasPermission(ctx.app.config.admin, ctx.auth.user, { user: ["impersonate-admins"] });
      const result = await impersonation.impersonateUser(ctx.app, ctx.em, actor(ctx), ctx.req, { userId: input.userId, mayImpersonateAdmins });
      // The admin's own token stays client-side, HttpOnly like the session cookie, for stop-impersonating,
      // for as long as the admin's session lives: rounded up, never a second short of it.
      const adminRemainingSec = Math.max(0, Math.ceil((ctx.auth.session.expiresAt.getTime() - ctx.app.clock.now().getTime()) / 1000));
      (ctx.effects.cookies ??= []).push({ name: ADMIN_SESSION_COOKIE, value: ctx.sessionToken!, maxAgeSec: adminRemainingSec });
      // A browser-session cookie (better-auth's): the impersonation ends with the browser or its hour.
      handOverSession(ctx, { token: result.issued.token, cookieMaxAgeSec: null });
      return { session: { ...publicSession(result.issued.session), token: result.issued.token }, user: userOut(result.user) };
    }),

  /**
   * Any signed-in session: it is the impersonated user's; the service refuses ordinary sessions.
   * Answers the get-session body of the session the caller holds afterwards: the admin's own,
   * restored from the admin_session cookie (better-auth's shape), or `null` when the request
   * carried no such cookie (a bearer client): the impersonation is over and no session is
   * handed out (docs/wire-contract.md §6), the session cookie is cleared, and no set-auth-token is sent.
   */
  stopImpersonating: authedProcedure.mutation(async ({ ctx }) => {
    const result = await impersonation.stopImpersonating(ctx.app, ctx.em, ctx.req, ctx.auth, ctx.readCookie(ADMIN_SESSION_COOKIE));
    (ctx.effects.cookies ??= []).push({ name: ADMIN_SESSION_COOKIE, value: "", maxAgeSec: 0 });
    if (result.kind === "ended") {
      ctx.effects.sessionCookie = { clear: true };
      return null;
    }
    // The request carried the admin's token (its admin_session cookie): handing it back is no new grant.
    handOverSession(ctx, { token: result.token, cookieMaxAgeSec: sessionCookieMaxAgeSec(ctx.app, result.auth.session) });
    return result.auth.entry.body;
  }),

  listUserSessions: withPermission("session", ["list"])
    .input(schema.userIdInput)
    .mutation(async ({ ctx, input }) => ({
      sessions: await sessions.listUserSessions(ctx.app, ctx.em, input.userId, { sessionId: ctx.auth.session.id, token: ctx.sessionToken }),
    })),

  revokeUserSession: withPermission("session", ["revoke"])
    .input(schema.revokeUserSessionInput)
    .mutation(async ({ ctx, input }) => {
      await sessions.revokeUserSession(ctx.app, ctx.em, actor(ctx), { sessionToken: input.sessionToken, sessionId: input.sessionId ?? input.id });
      return { success: true as const };
    }),

  revokeUserSessions: withPermission("session", ["revoke"])
    .input(schema.userIdInput)
    .mutation(async ({ ctx, input }) => {
      await sessions.revokeUserSessions(ctx.app, ctx.em, actor(ctx), input.userId);
      return { success: true as const };
    }),

  // Any signed-in user may ask about their own permissions.
  hasPermission: authedProcedure.input(schema.hasPermissionInput).mutation(({ ctx, input }) => ({
    success: hasPermission(ctx.app.config.admin, ctx.auth.user, (input.permissions ?? input.permission)!),
    error: null,
  })),

  listAuditEvents: withPermission("audit", ["list"])
    .input(schema.listAuditEventsInput)
    .query(({ ctx, input }) => {
      const { limit, offset, ...filter } = input;
      return listAuditEvents(ctx.em, { limit: limit ?? schema.LIMIT_DEFAULT, offset: offset ?? 0 }, filter);
    }),

  // A page of the export; GET /admin/export-audit-events streams every page as NDJSON (rest-bridge/ndjson.ts).
  exportAuditEvents: withPermission("audit", ["list"])
    .input(schema.exportAuditEventsInput)
    .query(({ ctx, input }) => exportAuditEvents(ctx.em, { ...input, limit: input.limit ?? schema.LIMIT_MAX })),

  // The admin console's dashboard (tRPC only): one aggregate query per figure (src/db/dashboard.ts).
  dashboard: withPermission("audit", ["list"]).query(({ ctx }) => readDashboard(ctx.app.orm, ctx.app.dialect, ctx.app.clock.now().getTime())),

  // The admin console's user page (tRPC only: better-auth's admin plugin has no such routes).
  listUserAccounts: withPermission("user", ["get"])
    .input(schema.userIdInput)
    .query(async ({ ctx, input }) => ({ accounts: await records.listUserAccounts(ctx.em, input.userId) })),

  listUserDeviceCodes: withPermission("user", ["get"])
    .input(schema.userIdInput)
    .query(async ({ ctx, input }) => ({ deviceCodes: await records.listUserDeviceCodes(ctx.em, input.userId) })),
});
