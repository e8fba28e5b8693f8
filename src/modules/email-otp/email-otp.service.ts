import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { hashPassword } from "../../crypto/password.ts";
import { User, type IUser } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { emailOtpEmail } from "../../mail/templates.ts";
import type { EmailOtpType } from "../../mail/types.ts";
import {
  checkPasswordLength, mailTokenLater, parseEmail, type PreparedMail, recordAudit, type RequestInfo, resetPasswordOf, signInByAddress, userChanged, userRow,
} from "../../core/index.ts";
import { consumeCode, deleteCode, matchCode, storeCode } from "./codes.ts";

/**
 * better-auth's email-otp plugin (docs/passwordless.md), with the differences of
 * docs/wire-contract.md §10: codes stored as keyed digests, sends decided after the answer, and a
 * code for every address asked for, mailed or not, so the answers to a guess say nothing about
 * whether the address has an account.
 */

/** Whether a code of this type goes out to this address (the row is stored either way). */
function mailsCode(app: App, user: IUser | null, type: EmailOtpType): boolean {
  if (type === "sign-in") return user !== null || !app.config.emailOTP.disableSignUp;
  if (type === "email-verification") return user !== null && !user.emailVerified;
  return user !== null;
}

/** The code and its mail, inside the deferred job: null when throttled, or when nothing goes out. */
export async function prepareCode(app: App, em: EntityManager, email: string, type: EmailOtpType): Promise<PreparedMail | null> {
  // Counted before the lookup: unknown addresses spend their budget like known ones.
  if (!(await app.addressLimiter.allow("email-otp", email))) return null;
  const user = await em.findOne(User, { email }, { disableIdentityMap: true });
  const stored = await storeCode(app, em, email, type);
  if (!stored || !mailsCode(app, user, type)) return null;
  const message = emailOtpEmail(email, user?.name || null, stored.code, type, app.config.emailOTP.expiresIn);
  return { message, undo: (e) => deleteCode(e, stored.id) };
}

/**
 * POST /email-otp/send-verification-otp, /email-otp/request-password-reset,
 * /forget-password/email-otp: only the address format is checked here; the throttle, the lookup,
 * the code and the SMTP send run after the answer, so every address answers alike, in the same time.
 */
export function requestCode(app: App, req: MailRequest, rawEmail: string, type: EmailOtpType): void {
  const email = parseEmail(rawEmail);
  mailTokenLater(app, req, `email-otp:${type}`, (em) => prepareCode(app, em, email, type));
}

/**
 * POST /sign-in/email-otp: the code, then one transaction that uses it up and signs in (creating
 * the account unless `disableSignUp`; the takeover rule for an unproven one; the two-factor gate).
 */
export async function signInWithCode(
  app: App,
  em: EntityManager,
  req: RequestInfo,
  input: { email: string; otp: string; name?: string | undefined; image?: string | null | undefined },
  trustCookie: string | null,
) {
  const email = parseEmail(input.email);
  const matched = await matchCode(app, em, email, "sign-in", input.otp);
  const opts = { signUp: !app.config.emailOTP.disableSignUp, noAccount: "INVALID_OTP", invalidProof: "INVALID_OTP", audit: "email-otp-sign-in", trustCookie } as const;
  return signInByAddress(app, em, req, opts, async (tx) => ((await consumeCode(tx, matched)) ? { email, name: input.name, image: input.image } : null));
}

/** The account a used code speaks for; INVALID_OTP when there is none (never USER_NOT_FOUND: no existence oracle). */
async function accountOf(tx: EntityManager, email: string): Promise<IUser> {
  const user = await tx.findOne(User, { email }, { disableIdentityMap: true });
  if (!user) throw new AuthError("INVALID_OTP");
  return user;
}

/** POST /email-otp/verify-email: the code proves the address; it becomes verified (as the mailed link does). */
export async function verifyEmailWithCode(app: App, em: EntityManager, rawEmail: string, otp: string): Promise<UserRow> {
  const email = parseEmail(rawEmail);
  const matched = await matchCode(app, em, email, "email-verification", otp);
  return inTransaction(em, async (tx) => {
    if (!(await consumeCode(tx, matched))) throw new AuthError("INVALID_OTP");
    const user = userRow(await accountOf(tx, email));
    if (user.emailVerified) return user;
    const now = app.clock.now();
    await tx.nativeUpdate(User, { id: user.id }, { emailVerified: true, updatedAt: now });
    // Cached sessions carry the user row: they go, so get-session shows emailVerified at once.
    userChanged(app, tx, user.id);
    return { ...user, emailVerified: true, updatedAt: now };
  });
}

/**
 * POST /email-otp/check-verification-otp: is the code right? It spends a try and is not used up.
 * A sign-in code is right for an address without an account when sign-in may create one
 * (better-auth answers USER_NOT_FOUND, which breaks "check, then sign up" forms).
 */
export async function checkCode(app: App, em: EntityManager, rawEmail: string, type: EmailOtpType, otp: string): Promise<void> {
  const email = parseEmail(rawEmail);
  await matchCode(app, em, email, type, otp);
  if (type !== "sign-in" || app.config.emailOTP.disableSignUp) await accountOf(em, email);
}

/**
 * POST /email-otp/reset-password: length rules first (a too-short password costs no try), the
 * code, argon2, then one transaction: use the code up and reset (core/holdings.ts
 * resetPasswordOf: every session ends, an unproven address is taken over), with its audit record.
 */
export async function resetPasswordWithCode(app: App, em: EntityManager, req: RequestInfo, input: { email: string; otp: string; password: string }): Promise<void> {
  checkPasswordLength(app.config, input.password);
  const email = parseEmail(input.email);
  const matched = await matchCode(app, em, email, "forget-password", input.otp);
  const passwordHash = await hashPassword(input.password);
  await inTransaction(em, async (tx) => {
    if (!(await consumeCode(tx, matched))) throw new AuthError("INVALID_OTP");
    const user = await accountOf(tx, email);
    await resetPasswordOf(app, tx, user, passwordHash);
    const actor = { userId: user.id, impersonatorId: null, ip: req.ip, userAgent: req.userAgent };
    await recordAudit(tx, app.clock, actor, { action: "email-otp-reset-password", targetType: "user", targetId: user.id, metadata: { unprovenAccessRemoved: !user.emailVerified } });
  });
}
