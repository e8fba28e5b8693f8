import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { Account, User, Verification } from "../db/entities/index.ts";
import { CREDENTIAL_PROVIDER, storePassword } from "./credential.ts";
import { endImpersonationsBy, revokeAllSessions, userChanged } from "./session/revoke.ts";
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

/**
 * THE takeover rule (docs/wire-contract.md §5 linking safety): someone has just proven control of
 * the address of `user` (a provider that vouches for it, a reset link or code, a magic link, a
 * sign-in code). When nobody had proven it before, whoever registered it without proof loses
 * every way in, in the caller's transaction (removeEverythingUserHolds with `accounts`: "all" for
 * a sign-in, "social" for a reset, which keeps the password it sets), and the address becomes
 * verified. True when that happened: a squatter's two-factor enrollment went with it.
 */
export async function addressProven(app: App, tx: EntityManager, user: { id: string; emailVerified: boolean }, accounts: "all" | "social"): Promise<boolean> {
  if (user.emailVerified) return false;
  await removeEverythingUserHolds(app, tx, user.id, { accounts });
  await tx.nativeUpdate(User, { id: user.id }, { emailVerified: true, updatedAt: app.clock.now() });
  userChanged(app, tx, user.id);
  return true;
}

/**
 * A password reset, by a mailed link or a mailed code, inside the caller's transaction (after it
 * used the link or code up): the new hash (creating the credential account of a user who has
 * none), "the password changed", and everything the user holds but the password goes: sessions,
 * device codes, mailed links, link flows. The reset proves the address (addressProven).
 */
export async function resetPasswordOf(app: App, tx: EntityManager, user: { id: string; emailVerified: boolean }, passwordHash: string): Promise<void> {
  await storePassword(tx, user.id, passwordHash, app.clock.now());
  await passwordChanged(app, tx, user.id);
  if (await addressProven(app, tx, user, "social")) return;
  await removeEverythingUserHolds(app, tx, user.id, { accounts: "none" });
  userChanged(app, tx, user.id);
}
