import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { verifyAgainstDummy, verifyPassword } from "../crypto/password.ts";
import { Account } from "../db/entities/index.ts";
import { AuthError } from "../errors.ts";
import { CREDENTIAL_PROVIDER } from "./credential.ts";
import type { ResolvedSession } from "./session/sessions.ts";

/** Who is proving the password: the session's user, from the request's client address (null in process). */
export interface StepUpCaller {
  userId: string;
  ip: string | null;
}

/**
 * What a user without a password gets: CREDENTIAL_ACCOUNT_NOT_FOUND (change-password and
 * delete-user, better-auth's answers), or INVALID_PASSWORD after a dummy verify
 * (verify-password and the two-factor routes: the same answer and time as a wrong password).
 */
export type WithoutPassword = "CREDENTIAL_ACCOUNT_NOT_FOUND" | "INVALID_PASSWORD";

/**
 * THE current-password check (step-up): every route that asks the signed-in user for their
 * password calls this. The attempt is counted first, per user and per client address, across
 * all of these routes (rate-limit/step-up-limit.ts): over the limit, 429 RATE_LIMITED with
 * Retry-After before any password is verified. A right password hands its attempt back and
 * clears nothing (docs/security.md "Step-up"). Returns the credential account's id.
 */
export async function verifyCurrentPassword(app: App, em: EntityManager, caller: StepUpCaller, password: string, withoutPassword: WithoutPassword): Promise<string> {
  const attempt = await app.stepUpLimiter.attempt(caller.userId, caller.ip);
  if (!attempt.allowed) {
    const seconds = String(attempt.retryAfterSec);
    throw new AuthError("RATE_LIMITED", { headers: { "retry-after": seconds, "x-retry-after": seconds } });
  }
  const account = await em.findOne(Account, { user: caller.userId, providerId: CREDENTIAL_PROVIDER }, { fields: ["id", "password"], disableIdentityMap: true });
  if (!account?.password) {
    if (withoutPassword === "CREDENTIAL_ACCOUNT_NOT_FOUND") throw new AuthError("CREDENTIAL_ACCOUNT_NOT_FOUND");
    await verifyAgainstDummy(password);
    throw new AuthError("INVALID_PASSWORD");
  }
  if (!(await verifyPassword(account.password, password))) throw new AuthError("INVALID_PASSWORD");
  await attempt.refund();
  return account.id;
}

/**
 * A session signed in less than `session.freshAgeSec` ago (better-auth's `freshAge`; 0: every
 * session): proof enough that the account holder is at the keyboard for passkey registration and
 * delete-user without a password. The fresh procedure builder (trpc/init.ts) asks it.
 */
export function isFresh(app: App, auth: ResolvedSession): boolean {
  // A key-backed principal never signed in: it is never fresh (docs/machine-access.md).
  if (auth.apiKey) return false;
  const freshAgeMs = app.config.session.freshAgeSec * 1000;
  return freshAgeMs === 0 || app.clock.now().getTime() - auth.session.createdAt.getTime() < freshAgeMs;
}

/** What a step-up procedure (trpc/init.ts) hands its handler: is the session fresh, and the current password re-check. */
export interface StepUp {
  fresh: boolean;
  /** verifyCurrentPassword for the session's user from the request's address; the credential account's id. */
  verifyPassword(password: string, withoutPassword: WithoutPassword): Promise<string>;
}
