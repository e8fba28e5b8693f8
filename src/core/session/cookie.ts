import type { App } from "../../app.ts";
import { unsignBetterAuthToken } from "../../crypto/better-auth-token.ts";
import type { Context } from "../../trpc/context.ts";
import type { ResolvedSession } from "./sessions.ts";

/**
 * Max-Age of a session's cookie (CONTRACT.md §3): the configured lifetime, exactly, as at
 * sign-in and on each slide of the expiry; none (a browser-session cookie) for a rememberMe:
 * false session and for an impersonation. Never the session's remaining time: a cookie handed
 * over again means "this session, for its lifetime", and a remainder shrinks by the milliseconds
 * since the last extension, then rounds down (604799).
 */
export function sessionCookieMaxAgeSec(app: App, session: { rememberMe: boolean; impersonatedBy: string | null }): number | null {
  return session.rememberMe && !session.impersonatedBy ? app.config.session.expiresInSec : null;
}

/** The request carried this session's own cookie (alone, or beside a Bearer of the same session). */
function carriesSessionCookie(ctx: Context): boolean {
  if (ctx.tokenSource === "cookie") return true;
  const cookie = ctx.readCookie("session_token");
  return cookie !== null && ctx.sessionToken !== null && unsignBetterAuthToken(cookie, ctx.app.secrets) === ctx.sessionToken;
}

/**
 * better-auth's `setSessionCookie` after a change to the signed-in user (update-user, the
 * change-email proof, docs/http-api.md "Session cookie"): the caller's session cookie again, the
 * same token with a fresh Max-Age. Only to a request that carried that cookie: a Bearer-only
 * client never had one, and giving it one would make it a cookie client (and subject to the
 * CSRF rules) behind its back. A cookie this request already sets (a slide) is left as it is.
 */
export function resendSessionCookie(ctx: Context, auth: ResolvedSession): void {
  if (ctx.effects.sessionCookie || !ctx.sessionToken || !carriesSessionCookie(ctx)) return;
  ctx.effects.sessionCookie = { token: ctx.sessionToken, maxAgeSec: sessionCookieMaxAgeSec(ctx.app, auth.session) };
}
