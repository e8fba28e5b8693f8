import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { Account, Passkey, User, Verification } from "../db/entities/index.ts";
import { removeTwoFactor } from "../modules/two-factor/enrollment.service.ts";
import { CREDENTIAL_PROVIDER } from "../modules/email-password/email-password.service.ts";
import { endImpersonationsBy, endPendingSignIns, revokeAllSessions } from "./session/sessions.ts";
import { USER_TOKEN_PURPOSES } from "./single-use-tokens.ts";

/**
 * THE place that removes what a user holds (ARCHITECTURE.md "one place"): the takeover of an
 * unproven account (CONTRACT.md §5 linking safety), a password reset, and delete-user.
 *
 * Mailed tokens and OAuth link flows are verification rows tied to a user only inside their
 * JSON value: mail tokens start with `{"userId":"<id>"` (verification.service issueToken
 * writes userId first, the same prefix `issuedRecently` matches); /link-social's state holds
 * `"linkUserId":"<id>"`. User ids are UUIDs, so neither pattern holds a LIKE wildcard, and a
 * quote inside another JSON string is escaped, so the key cannot be matched from a URL field.
 */
const MAIL_TOKEN_PURPOSES = [...USER_TOKEN_PURPOSES];
const OAUTH_STATE_PURPOSE = "oauth-state";

const mailTokensOf = (userId: string) => ({ value: { $like: `{"userId":${JSON.stringify(userId)}%` } });

export interface Removal {
  /**
   * Linked accounts that go too: "all" (takeover: the unproven password included; delete-user),
   * "social" (the reset of an unverified account keeps the password it has just set, and drops
   * every provider account linked while nobody had proven the address), "none" (any other reset).
   * "all" and "social" also drop two-factor enrollment and passkeys: set up while unproven.
   */
  accounts: "all" | "social" | "none";
}

/**
 * Inside the caller's transaction, everything that lets anyone in as `userId` later: every
 * verification and reset link, every /link-social flow in flight, the accounts named by
 * `removal`, and last revokeAllSessions: device codes in any state (a pending or approved code
 * turns into a session when polled: RFC 8628 §3.5 then answers invalid_grant, the grant being
 * revoked, RFC 6749 §5.2), pending two-factor sign-ins, trusted devices and every session
 * (cache evicted), so a device-code exchange that committed while this ran is caught by the
 * session delete, and one that did not finds its code gone.
 */
export async function removeEverythingUserHolds(app: App, tx: EntityManager, userId: string, removal: Removal): Promise<void> {
  await tx.nativeDelete(Verification, { purpose: { $in: MAIL_TOKEN_PURPOSES }, ...mailTokensOf(userId) });
  await tx.nativeDelete(Verification, { purpose: OAUTH_STATE_PURPOSE, value: { $like: `%"linkUserId":${JSON.stringify(userId)}%` } });
  if (removal.accounts === "all") await tx.nativeDelete(Account, { user: userId });
  if (removal.accounts === "social") await tx.nativeDelete(Account, { user: userId, providerId: { $ne: CREDENTIAL_PROVIDER } });
  if (removal.accounts !== "none") {
    // Whoever held the unproven address may have enrolled their own second factor or passkey:
    // left in place, it would lock the owner out (two-factor) or let the squatter back in (passkey).
    await removeTwoFactor(app, tx, userId);
    await tx.nativeDelete(Passkey, { user: userId });
  }
  await revokeAllSessions(app, tx, userId);
}

/**
 * Deletes the user and, in the caller's transaction, everything it holds (above) and every
 * impersonation it started; the audit trail stays (it has no foreign keys). delete-user and admin
 * remove-user. `deleted` is false when the row was already gone (a concurrent deletion won);
 * `evict`: the users whose cached sessions the caller evicts again after its commit.
 */
export async function deleteUserAndEverything(app: App, tx: EntityManager, userId: string): Promise<{ deleted: boolean; evict: string[] }> {
  await removeEverythingUserHolds(app, tx, userId, { accounts: "all" });
  const targets = await endImpersonationsBy(app, tx, userId);
  const deleted = (await tx.nativeDelete(User, { id: userId })) === 1;
  return { deleted, evict: [userId, ...targets] };
}

/**
 * The password changed (reset-password, change-password, admin set-user-password), inside the
 * caller's transaction: no reset link mailed before the change may set another password over it,
 * and no two-factor sign-in started with the old password may finish. Sessions are each caller's
 * rule: reset ends them all, change-password with `revokeOtherSessions` only, set-user-password
 * keeps them (better-auth's rules; docs/security.md "Stale links").
 */
export async function passwordChanged(tx: EntityManager, userId: string): Promise<void> {
  await tx.nativeDelete(Verification, { purpose: "password-reset", ...mailTokensOf(userId) });
  await endPendingSignIns(tx, userId);
}

/**
 * The address changed (change-email, admin update-user), inside the caller's transaction: every
 * link mailed to the old address goes (reset, verification, change-email, delete-account). They
 * went to a mailbox that is no longer the account's: a reset link from it would take the moved
 * account over. Sessions stay (better-auth's rule for both).
 */
export async function addressChanged(tx: EntityManager, userId: string): Promise<void> {
  await tx.nativeDelete(Verification, { purpose: { $in: MAIL_TOKEN_PURPOSES }, ...mailTokensOf(userId) });
}
