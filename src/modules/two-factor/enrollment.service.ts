import { randomInt, randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { appAead } from "../../crypto/app-aead.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { TwoFactor, TwoFactorBackupCode, TwoFactorChallenge, User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import { userChanged, type StepUp } from "../../core/index.ts";
import { newTotpSecret, totpUri } from "./totp.ts";

/**
 * Enrollment: the TOTP secret (AES-256-GCM sealed, bound to its user by the AAD) and the backup
 * codes (SHA-256, one row each). `twoFactorEnabled` turns on only with the first verified code
 * (better-auth's `skipVerificationOnEnable: false`).
 */
const BACKUP_CODE_COUNT = 10;
const BACKUP_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

const secretAad = (userId: string) => `two-factor-secret:${userId}`;

/** better-auth's format: 10 characters of [a-zA-Z0-9] (≈ 59.5 bits) as `xxxxx-xxxxx`. */
function newBackupCode(): string {
  let code = "";
  for (let i = 0; i < 10; i++) code += BACKUP_ALPHABET[randomInt(BACKUP_ALPHABET.length)];
  return `${code.slice(0, 5)}-${code.slice(5)}`;
}

export const backupCodeDigest = (code: string) => sha256(`two-factor-backup:${code.trim()}`);

/** Replaces the user's backup codes (inside the caller's transaction); returns them, shown once. */
async function replaceBackupCodes(app: App, tx: EntityManager, userId: string): Promise<string[]> {
  const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
  const now = app.clock.now();
  await tx.nativeDelete(TwoFactorBackupCode, { user: userId });
  await tx.insertMany(TwoFactorBackupCode, codes.map((code) => ({ id: randomUUID(), user: userId, codeHash: backupCodeDigest(code), createdAt: now })));
  return codes;
}

export interface Enrollment {
  id: string;
  secret: string;
  verified: boolean;
  failedCount: number;
  lockedUntil: Date | null;
}

export async function findEnrollment(app: App, em: EntityManager, userId: string): Promise<Enrollment | null> {
  const row = await em.findOne(TwoFactor, { user: userId }, { disableIdentityMap: true });
  if (!row) return null;
  return {
    id: row.id,
    secret: appAead(app).decrypt(row.secret, secretAad(userId)),
    verified: row.verified,
    failedCount: row.failedCount,
    lockedUntil: row.lockedUntil ?? null,
  };
}

/** The caller's password, under the step-up limit: a wrong or missing one is 400 INVALID_PASSWORD. */
/** The password of every enrollment change (better-auth's): a wrong one or none at all is INVALID_PASSWORD. */
const checkPassword = (stepUp: StepUp, password: string) => stepUp.verifyPassword(password, "INVALID_PASSWORD");

const issuerOf = (app: App, requested: string | undefined) => requested?.trim() || app.config.twoFactor.issuer;

/**
 * POST /two-factor/enable: a new secret and new backup codes. Calling it again replaces both; an
 * enrollment already verified stays active (better-auth), a new one waits for its first code.
 */
export async function enable(app: App, em: EntityManager, user: UserRow, stepUp: StepUp, password: string, issuer?: string) {
  await checkPassword(stepUp, password);
  const secret = newTotpSecret();
  const now = app.clock.now();
  const backupCodes = await inTransaction(em, async (tx) => {
    const existing = await tx.findOne(TwoFactor, { user: user.id }, { disableIdentityMap: true });
    await tx.nativeDelete(TwoFactor, { user: user.id });
    await tx.insert(TwoFactor, {
      id: randomUUID(),
      user: user.id,
      secret: appAead(app).encrypt(secret, secretAad(user.id)),
      verified: existing?.verified === true,
      lastTotpStep: null,
      failedCount: 0,
      lockedUntil: null,
      createdAt: now,
      updatedAt: now,
    });
    return replaceBackupCodes(app, tx, user.id);
  });
  return { totpURI: totpUri(secret, issuerOf(app, issuer), user.email), backupCodes };
}

/** POST /two-factor/get-totp-uri. */
export async function getTotpUri(app: App, em: EntityManager, user: UserRow, stepUp: StepUp, password: string) {
  const enrollment = await findEnrollment(app, em, user.id);
  if (!enrollment) throw new AuthError("TOTP_NOT_ENABLED");
  await checkPassword(stepUp, password);
  return { totpURI: totpUri(enrollment.secret, issuerOf(app, undefined), user.email) };
}

/** POST /two-factor/generate-backup-codes: the old codes stop working. */
export async function generateBackupCodes(app: App, em: EntityManager, user: UserRow, stepUp: StepUp, password: string) {
  if (!user.twoFactorEnabled) throw new AuthError("TWO_FACTOR_NOT_ENABLED");
  await checkPassword(stepUp, password);
  const backupCodes = await inTransaction(em, async (tx) => {
    if ((await tx.count(TwoFactor, { user: user.id })) === 0) throw new AuthError("TWO_FACTOR_NOT_ENABLED");
    return replaceBackupCodes(app, tx, user.id);
  });
  return { status: true as const, backupCodes };
}

/**
 * Everything two-factor the user holds, in the caller's transaction: enrollment, backup codes,
 * pending sign-ins, trusted devices, mailed codes; `twoFactorEnabled` false (the user's cached
 * sessions go). Disable, the admin reset, and the takeover of an unproven account (holdings).
 */
export async function removeTwoFactor(app: App, tx: EntityManager, userId: string): Promise<void> {
  await tx.nativeDelete(TwoFactor, { user: userId });
  await tx.nativeDelete(TwoFactorBackupCode, { user: userId });
  await tx.nativeDelete(TwoFactorChallenge, { user: userId });
  await tx.nativeUpdate(User, { id: userId, twoFactorEnabled: true }, { twoFactorEnabled: false, updatedAt: app.clock.now() });
  userChanged(app, tx, userId);
}

/** POST /two-factor/disable. */
export async function disable(app: App, em: EntityManager, user: UserRow, stepUp: StepUp, password: string): Promise<void> {
  await checkPassword(stepUp, password);
  await inTransaction(em, (tx) => removeTwoFactor(app, tx, user.id));
}
