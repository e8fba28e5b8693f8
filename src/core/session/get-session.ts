import type { App } from "../../app.ts";
import type { MaybePromise } from "../../db/session-store/index.ts";
import type { Effects } from "../../trpc/context.ts";
import { resolveKeyPrincipal } from "./api-key-principal.ts";
import { resolveSession, type ResolvedSession } from "./sessions.ts";

export interface GetSessionAnswer {
  /** null: no token, or it names no live session (revoked, expired, banned). */
  resolved: ResolvedSession | null;
  /** The session cookie to re-send (sliding expiry moved) or clear (it names a dead session). */
  cookie: Effects["sessionCookie"] | undefined;
  /** Headers families add to an answer with a session (core/registry.ts SessionHeaders: `set-auth-jwt`). */
  headers?: Record<string, string>;
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
  if (resolved instanceof Promise) return resolved.then((r) => withHeaders(app, decide(r)));
  return withHeaders(app, decide(resolved));
}

/**
 * get-session of a request with the API-key header: the key's owner (better-auth's api-key
 * plugin answers it so), or the key's 401/429 thrown (docs/machine-access.md). No cookie either way.
 */
export function answerKeySession(app: App, key: string): MaybePromise<GetSessionAnswer> {
  const resolved = resolveKeyPrincipal(app, key);
  if (resolved instanceof Promise) return resolved.then((r) => withHeaders(app, { resolved: r, cookie: undefined }));
  return withHeaders(app, { resolved, cookie: undefined });
}

/** The families' headers for an answer with a session; synchronous when every family answers so. */
function withHeaders(app: App, answer: GetSessionAnswer): MaybePromise<GetSessionAnswer> {
  const hooks = app.registry.sessionHeaders;
  if (!answer.resolved || hooks.length === 0) return answer;
  const headers: Record<string, string> = {};
  const pending: Promise<Record<string, string>>[] = [];
  for (const hook of hooks) {
    const added = hook(app, answer.resolved.entry.value);
    if (added instanceof Promise) pending.push(added);
    else if (added) Object.assign(headers, added);
  }
  if (pending.length === 0) return { ...answer, headers };
  return Promise.all(pending).then((all) => ({ ...answer, headers: Object.assign(headers, ...all) }));
}
