import type { App } from "../../app.ts";
import { hashPassword, needsRehash } from "../../crypto/password.ts";
import { Account } from "../../db/entities/index.ts";

/**
 * A password that just verified against a hash we would not write today (better-auth's scrypt
 * from the import, older argon2 parameters) is hashed again with argon2id and stored, in the same
 * sign-in. The update names the old hash: a password changed meanwhile is never overwritten.
 * A failure is logged and the sign-in goes on; the next one tries again.
 */
export async function upgradePasswordHash(app: App, userId: string, oldHash: string, password: string, requestId?: string): Promise<void> {
  if (!needsRehash(oldHash)) return;
  try {
    const passwordHash = await hashPassword(password);
    await app.orm.em
      .fork()
      .nativeUpdate(Account, { user: userId, providerId: "credential", password: oldHash }, { password: passwordHash, updatedAt: app.clock.now() });
  } catch (err) {
    app.logger.warn({ requestId, err, userId }, "could not upgrade a password hash to argon2id");
  }
}
