import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { Account, User, Verification } from "../db/entities/index.ts";
import { CREDENTIAL_PROVIDER } from "./credential.ts";
import { endImpersonationsBy, revokeAllSessions } from "./session/revoke.ts";
import type { Removal } from "./registry.ts";
import { mailTokensOf, USER_TOKEN_PURPOSES } from "./single-use-tokens.ts";

/**
 * THE place that removes what a user holds (docs/architecture.md "The kernel"): the takeover of
 * an unproven account (docs/wire-contract.md §5 linking safety), a password reset, delete-user,
 * sign out everywhere, a changed password or address. The kernel removes what it owns (mailed
 * links, accounts, sessions); each family says what else it holds by registering a Holding
 * (core/registry.ts), so a new family's grants go with everything else.
 */
/**
 * Inside the caller's transaction, everything that lets anyone in as `userId` later: every
 * mailed link, the accounts named by `removal` with the credentials families registered, and
 * last sign out everywhere (core/session/revoke.ts), so a grant that turns into a session and
 * committed while this ran is caught by the session delete.
 */
export async function removeEverythingUserHolds(app: App, tx: EntityManager, userId: string, removal: Removal): Promise<void> {
  await tx.nativeDelete(Verification, { purpose: { $in: [...USER_TOKEN_PURPOSES] }, ...mailTokensOf(userId) });
  if (removal.accounts === "all") await tx.nativeDelete(Account, { user: userId });
  if (removal.accounts === "social") await tx.nativeDelete(Account, { user: userId, providerId: { $ne: CREDENTIAL_PROVIDER } });
  for (const holding of app.registry.holdings) await holding.removed?.(app, tx, userId, removal);
  await revokeAllSessions(app, tx, userId);
}

/**
 * Deletes the user and, in the caller's transaction, everything it holds (above) and every
 * impersonation it started; the audit trail stays (it has no foreign keys). delete-user and admin
 * remove-user. False when the row was already gone (a concurrent deletion won).
 */
export async function deleteUserAndEverything(app: App, tx: EntityManager, userId: string): Promise<boolean> {
  await removeEverythingUserHolds(app, tx, userId, { accounts: "all" });
  await endImpersonationsBy(app, tx, userId);
  return (await tx.nativeDelete(User, { id: userId })) === 1;
}

/**
 * The password changed (reset-password, change-password, admin set-user-password), inside the
 * caller's transaction: no reset link mailed before the change may set another password over it,
 * and nothing the old password started may finish. Sessions are each caller's rule: reset ends
 * them all, change-password with `revokeOtherSessions` only, set-user-password keeps them
 * (better-auth's rules; docs/security.md "Stale links").
 */
export async function passwordChanged(app: App, tx: EntityManager, userId: string): Promise<void> {
  await tx.nativeDelete(Verification, { purpose: "password-reset", ...mailTokensOf(userId) });
  for (const holding of app.registry.holdings) await holding.passwordChanged?.(app, tx, userId);
}

/**
 * The address changed (change-email, admin update-user), inside the caller's transaction: every
 * link mailed to the old address goes (reset, verification, change-email, delete-account). They
 * went to a mailbox that is no longer the account's: a reset link from it would take the moved
 * account over. Sessions stay (better-auth's rule for both).
 */
export async function addressChanged(tx: EntityManager, userId: string): Promise<void> {
  await tx.nativeDelete(Verification, { purpose: { $in: [...USER_TOKEN_PURPOSES] }, ...mailTokensOf(userId) });
}
