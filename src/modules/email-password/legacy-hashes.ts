import type { App } from "../../app.ts";
import { burnScryptVerify, hashPassword, isBetterAuthHash, needsRehash, verifyAgainstDummy } from "../../crypto/password.ts";
import { Account, BetterAuthImport } from "../../db/entities/index.ts";

/**
 * Password hashes this service verifies but no longer writes: better-auth's scrypt, kept by the
 * import (src/import/) until each user's next sign-in.
 */

/** Per instance: whether credentials with better-auth's scrypt hash may exist (set at start, and when one verifies). */
const pending = new WeakMap<App, boolean>();

/**
 * At start: an import happened (its ledger holds accounts) and some credential still has a hash
 * other than argon2id. Two indexed look-ups; the scan stops at the first such hash. An import run
 * while this instance runs is seen at its next start, or at the first imported sign-in. A probe
 * that fails does not stop the start: it is logged, and legacy hashes are assumed (failed
 * sign-ins then pay for a scrypt verify, the safe side of docs/security.md's timing rule).
 */
export async function detectLegacyHashes(app: App): Promise<void> {
  try {
    const em = app.orm.em.fork();
    const imported = await em.findOne(BetterAuthImport, { sourceTable: "account" }, { fields: ["sourceId"], disableIdentityMap: true });
    // MikroORM takes $not over a whole condition, never on a property.
    const legacy =
      imported !== null &&
      (await em.findOne(Account, { providerId: "credential", $not: { password: { $like: "$argon2id$%" } } }, { fields: ["id"], disableIdentityMap: true })) !== null;
    pending.set(app, legacy);
  } catch (err) {
    app.logger.warn({ err }, "could not tell whether imported better-auth password hashes remain: failed sign-ins are timed as if they do");
    pending.set(app, true);
  }
}

/**
 * A failed password sign-in costs the same whatever the address names: an unknown address, an
 * account hashed with argon2id, one still holding its better-auth scrypt hash (≈10x argon2id's
 * time here). While scrypt hashes may exist, every failure pays for the verify it did not do, so
 * timing tells an imported account from an unknown address no better than a wrong password does.
 * `hash`: the account's, or null when there is none (the dummy argon2id verify was done).
 */
export async function equalizeFailedCheck(app: App, hash: string | null, password: string): Promise<void> {
  const legacy = hash !== null && isBetterAuthHash(hash);
  if (legacy) pending.set(app, true);
  if (!pending.get(app)) return;
  if (legacy) await verifyAgainstDummy(password);
  else await burnScryptVerify(password);
}

/**
 * A password that just verified against a hash we would not write today (better-auth's scrypt
 * from the import, older argon2 parameters) is hashed again with argon2id and stored, in the same
 * sign-in. The update names the old hash: a password changed meanwhile is never overwritten.
 * A failure is logged and the sign-in goes on; the next one tries again.
 */
export async function upgradePasswordHash(app: App, userId: string, oldHash: string, password: string, requestId?: string): Promise<void> {
  if (!needsRehash(oldHash)) return;
  if (isBetterAuthHash(oldHash)) pending.set(app, true);
  try {
    const passwordHash = await hashPassword(password);
    await app.orm.em
      .fork()
      .nativeUpdate(Account, { user: userId, providerId: "credential", password: oldHash }, { password: passwordHash, updatedAt: app.clock.now() });
  } catch (err) {
    app.logger.warn({ requestId, err, userId }, "could not upgrade a password hash to argon2id");
  }
}
