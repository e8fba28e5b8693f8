import { AuthError, type ErrorCode } from "../errors.ts";
import type { ResolvedSession } from "./session/sessions.ts";

/**
 * THE rule of lasting access (docs/wire-contract.md §6): a session an admin holds as someone else
 * (impersonation) may read and act as the user but never create or change access that outlives
 * it: device approval, linking, password or email changes, credentials (two-factor, passkeys),
 * deleting the account, provider tokens. A session of another kind of principal (an API key)
 * will have the same limits: it is added here, and every guard follows.
 */
export function lastingAccessRefusal(auth: ResolvedSession): ErrorCode | null {
  if (auth.session.impersonatedBy) return "IMPERSONATION_NOT_ALLOWED";
  return null;
}

/** Throws the refusal of lastingAccessRefusal: the lasting procedures (trpc/init.ts) and a step that turns lasting only on some inputs (two-factor activation). */
export function assertLastingAccess(auth: ResolvedSession): void {
  const refusal = lastingAccessRefusal(auth);
  if (refusal) throw new AuthError(refusal);
}
