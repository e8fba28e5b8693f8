import type { App } from "../../app.ts";

/**
 * Max-Age of a session's cookie (docs/wire-contract.md §3): the configured lifetime, exactly, as
 * at sign-in and on each slide of the expiry; none (a browser-session cookie) for a rememberMe:
 * false session and for an impersonation. Never the session's remaining time: a cookie handed
 * over again means "this session, for its lifetime", and a remainder shrinks by the milliseconds
 * since the last extension, then rounds down (604799).
 */
export function sessionCookieMaxAgeSec(app: App, session: { rememberMe: boolean; impersonatedBy: string | null }): number | null {
  return session.rememberMe && !session.impersonatedBy ? app.config.session.expiresInSec : null;
}
