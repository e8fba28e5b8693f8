import { unsignBetterAuthToken } from "../crypto/better-auth-token.ts";
import { type ResolvedSession, sessionCookieMaxAgeSec } from "../core/index.ts";
import type { Context } from "./context.ts";

/**
 * How a procedure hands a session over (docs/wire-contract.md §3): the session cookie and the
 * `set-auth-token` header for a freshly issued session; the cookie again after a change to the
 * signed-in user. Every family that signs someone in uses these, so cookies look the same
 * whichever way in a user took.
 */

/** A freshly issued session: its cookie and `set-auth-token`. */
export function handOverSession(
  ctx: Context,
  signedIn: { token: string | null; cookieMaxAgeSec: number | null; userId?: string; user?: { id: string }; session?: { userId: string } | null },
): void {
  if (!signedIn.token) return;
  ctx.effects.sessionCookie = { token: signedIn.token, maxAgeSec: signedIn.cookieMaxAgeSec };
  ctx.effects.authToken = signedIn.token;
  // A sign-in call's audit record names the session's user (trpc/sign-in-audit.ts).
  const attempt = ctx.req.signInAttempt;
  if (attempt) attempt.userId = signedIn.userId ?? signedIn.user?.id ?? signedIn.session?.userId ?? attempt.userId;
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
