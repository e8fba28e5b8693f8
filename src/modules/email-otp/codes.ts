import { randomInt, randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { keyedDigest, keyedDigestMatches } from "../../crypto/signing.ts";
import { EmailOtp } from "../../db/entities/index.ts";
import { raw, UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import type { EmailOtpType } from "../../mail/types.ts";

/**
 * The codes (docs/passwordless.md "Codes"): one live code per address and type, 6 digits by
 * default, stored as keyed digests (src/db/entities/email-otp.ts). A new send replaces the old
 * code with a fresh attempt budget: every send puts a code in the owner's mailbox, so a budget
 * carried over would let anyone lock the owner out with a few wrong guesses, and the sends an
 * attacker can ask for are bounded per address whatever the IP (rateLimit.perAddress), which
 * bounds the guesses too (docs/security.md "One-time codes").
 */

/** The address's digest under each accepted secret, newest first: codes stored before a rotation are still found. */
function addressDigests(app: App, email: string): string[] {
  return app.secrets.map((secret) => keyedDigest(`email-otp:${email}`, secret));
}

/** The row's code digest: keyed, and bound to the row (the same code sent twice digests differently). */
const codeInput = (id: string, code: string) => `${id}:${code}`;

export interface StoredCode {
  id: string;
  code: string;
}

/**
 * Replaces the address's code of this type with a fresh one, in one transaction. Null when a
 * concurrent send for the same address and type won the unique index: its code goes out instead.
 */
export async function storeCode(app: App, em: EntityManager, email: string, type: EmailOtpType): Promise<StoredCode | null> {
  const { otpLength, expiresIn } = app.config.emailOTP;
  const code = String(randomInt(10 ** otpLength)).padStart(otpLength, "0");
  const id = randomUUID();
  const now = app.clock.now();
  const digests = addressDigests(app, email);
  const row = { id, addressDigest: digests[0]!, type, codeDigest: keyedDigest(codeInput(id, code), app.secret), attempts: 0, expiresAt: new Date(now.getTime() + expiresIn * 1000), createdAt: now };
  try {
    await inTransaction(em, async (tx) => {
      await tx.nativeDelete(EmailOtp, { addressDigest: { $in: digests }, type });
      await tx.insert(EmailOtp, row);
    });
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return null;
    throw err;
  }
  return { id, code };
}

/** The code of a mail that was never sent goes again (core/single-use-tokens.ts mailTokenLater). */
export async function deleteCode(em: EntityManager, id: string): Promise<void> {
  await em.nativeDelete(EmailOtp, { id });
}

/** True when the address got a code of this type less than `withinSec` ago (a resend throttle). */
export async function sentRecently(app: App, em: EntityManager, email: string, type: EmailOtpType, withinSec: number): Promise<boolean> {
  const since = new Date(app.clock.now().getTime() - withinSec * 1000);
  return (await em.count(EmailOtp, { addressDigest: { $in: addressDigests(app, email) }, type, createdAt: { $gt: since } })) > 0;
}

/** A code that matched: consumeCode uses exactly this one up (not a code that replaced it meanwhile). */
export interface MatchedCode {
  id: string;
  codeDigest: string;
}

/** Why a live row refused a try, read after the conditional update found nothing to spend. */
function refusal(app: App, row: { expiresAt: Date; attempts: number } | null): AuthError {
  if (!row) return new AuthError("INVALID_OTP");
  if (row.expiresAt.getTime() <= app.clock.now().getTime()) return new AuthError("OTP_EXPIRED");
  if (row.attempts >= app.config.emailOTP.allowedAttempts) return new AuthError("TOO_MANY_ATTEMPTS");
  return new AuthError("INVALID_OTP");
}

/**
 * One try at the address's code of this type. The attempt is spent first, by a conditional
 * update of that very code (its digest in the WHERE clause), committed on its own; only then is
 * the code compared, in constant time. So concurrent guesses cannot share an attempt, a try that
 * fails later still counts, and a try that read a code replaced meanwhile spends nothing of the
 * new one. The try after `allowedAttempts` answers TOO_MANY_ATTEMPTS, even with the right code.
 */
export async function matchCode(app: App, em: EntityManager, email: string, type: EmailOtpType, otp: string): Promise<MatchedCode> {
  const where = { addressDigest: { $in: addressDigests(app, email) }, type };
  const row = await em.findOne(EmailOtp, where, { disableIdentityMap: true });
  if (!row) throw new AuthError("INVALID_OTP");
  const now = app.clock.now();
  const allowed = app.config.emailOTP.allowedAttempts;
  const spent = await em.nativeUpdate(
    EmailOtp,
    { id: row.id, codeDigest: row.codeDigest, attempts: { $lt: allowed }, expiresAt: { $gt: now } },
    { attempts: raw("attempts + 1") },
  );
  if (spent !== 1) {
    const current = await em.findOne(EmailOtp, { id: row.id, codeDigest: row.codeDigest }, { disableIdentityMap: true });
    throw refusal(app, current);
  }
  if (!/^\d{1,12}$/.test(otp) || !keyedDigestMatches(codeInput(row.id, otp), row.codeDigest, app.secrets)) throw new AuthError("INVALID_OTP");
  return { id: row.id, codeDigest: row.codeDigest };
}

/** Uses a matched code up, inside the caller's transaction: of two requests with the same right code, one gets true. */
export async function consumeCode(tx: EntityManager, matched: MatchedCode): Promise<boolean> {
  return (await tx.nativeDelete(EmailOtp, { id: matched.id, codeDigest: matched.codeDigest })) === 1;
}
