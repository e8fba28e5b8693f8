import { AuthError, type ErrorCode } from "../errors.ts";
import type { ResolvedSession } from "./session/sessions.ts";

/**
 * THE rules of lasting access (docs/wire-contract.md §6, docs/machine-access.md "API keys").
 *
 * A key-backed principal (a request with the API-key header) may act as its owner but never touch
 * account security: change the password or the email, set credentials (two-factor, passkeys),
 * delete the account, sign out other sessions, link accounts, create or change API keys, approve
 * a device, impersonate. A leaked key must not become a password or a new key.
 */
export function keyPrincipalRefusal(auth: ResolvedSession): ErrorCode | null {
  return auth.apiKey ? "API_KEY_SESSION_NOT_ALLOWED" : null;
}

/**
 * A session an admin holds as someone else (impersonation) may read and act as the user but
 * never create or change access that outlives it: device approval, linking, password or email
 * changes, credentials (two-factor, passkeys), deleting the account, provider tokens, API keys.
 * Every principal keyPrincipalRefusal refuses is refused here too.
 */
export function lastingAccessRefusal(auth: ResolvedSession): ErrorCode | null {
  const byKey = keyPrincipalRefusal(auth);
  if (byKey) return byKey;
  if (auth.session.impersonatedBy) return "IMPERSONATION_NOT_ALLOWED";
  return null;
}

/** Throws the refusal of lastingAccessRefusal: the lasting procedures (trpc/init.ts) and a step that turns lasting only on some inputs (two-factor activation). */
export function assertLastingAccess(auth: ResolvedSession): void {
  const refusal = lastingAccessRefusal(auth);
  if (refusal) throw new AuthError(refusal);
}

/** Throws the refusal of keyPrincipalRefusal: the account procedures (trpc/init.ts) an impersonation may call but a key may not. */
export function assertNotKeyPrincipal(auth: ResolvedSession): void {
  const refusal = keyPrincipalRefusal(auth);
  if (refusal) throw new AuthError(refusal);
}
