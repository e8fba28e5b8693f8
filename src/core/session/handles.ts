import type { App } from "../../app.ts";
import { sign, verify } from "../../crypto/signing.ts";
import { sha256 } from "../../crypto/tokens.ts";

/**
 * Listings carry a `token` per session so the SDK's `revokeSession({ token })` idiom works
 * (docs/wire-contract.md §2), but the database keeps only digests, and handing out other sessions'
 * secrets would turn a listing into a credential leak. Every session but the caller's gets an
 * opaque revocation handle instead: `sh.<session id>.<HMAC>`. It names a session for the
 * revoke endpoints and is never a credential: as a Bearer token or cookie its digest matches
 * no session (401).
 */
const LABEL = "sh.";

export function sessionHandle(app: App, sessionId: string): string {
  return sign(`${LABEL}${sessionId}`, app.secret);
}

/** The session id a handle names, or null for anything that is not a handle we signed (any secret in rotation). */
export function sessionIdOfHandle(app: App, value: string): string | null {
  if (!value.startsWith(LABEL) || value.length > 200) return null;
  const signed = verify(value, app.secrets);
  return signed ? signed.slice(LABEL.length) : null;
}

/** What a revoke endpoint was given as `token`: a handle (→ session id) or a raw token (→ its digest). */
export type SessionRef = { id: string } | { tokenHash: string };

export function sessionRefOf(app: App, token: string): SessionRef {
  const id = sessionIdOfHandle(app, token);
  return id ? { id } : { tokenHash: sha256(token) };
}

/** A listed session's `token`: the raw token for the calling session, a handle for the others. */
export function listedToken(app: App, sessionId: string, caller: { sessionId: string; token: string | null }): string {
  return sessionId === caller.sessionId && caller.token ? caller.token : sessionHandle(app, sessionId);
}
