import type { App } from "../../app.ts";
import type { MaybePromise } from "../../db/session-store/index.ts";
import type { Effects } from "../../trpc/context.ts";
import { resolveSession, type ResolvedSession } from "./sessions.ts";

export interface GetSessionAnswer {
  /** null: no token, or it names no live session (revoked, expired, banned). */
  resolved: ResolvedSession | null;
  /** The session cookie to re-send (sliding expiry moved) or clear (it names a dead session). */
  cookie: Effects["sessionCookie"] | undefined;
}

const NO_SESSION: GetSessionAnswer = { resolved: null, cookie: undefined };

/**
 * get-session, whole: the REST bridge calls it directly (rest-bridge/get-session.ts, no tRPC
 * caller on the hot path) and the tRPC procedure calls it too, so both give one answer.
 * `readSessionCookie`: the session cookie's value, asked for only when the session is dead.
 */
export function answerGetSession(
  app: App,
  token: string | null,
  source: "bearer" | "cookie" | null,
  readSessionCookie: () => string | null,
): MaybePromise<GetSessionAnswer> {
  if (!token) return NO_SESSION;
  const decide = (resolved: ResolvedSession | null): GetSessionAnswer => {
    if (resolved) {
      // Sliding expiry moved: re-send the cookie (browser clients only).
      const cookie = resolved.extended && source === "cookie" ? { token, maxAgeSec: app.config.session.expiresInSec } : undefined;
      return { resolved, cookie };
    }
    // A cookie naming the dead session is cleared, as better-auth does, also when the same token
    // came as Bearer too; a cookie of another session is left alone.
    return readSessionCookie() === token ? { resolved: null, cookie: { clear: true } } : NO_SESSION;
  };
  const resolved = resolveSession(app, token);
  return resolved instanceof Promise ? resolved.then(decide) : decide(resolved);
}
