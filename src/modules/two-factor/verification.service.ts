import { randomInt } from "node:crypto";
import { raw } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { keyedDigest, keyedDigestMatches } from "../../crypto/signing.ts";
import { TwoFactor, TwoFactorBackupCode, User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { twoFactorOtpEmail } from "../../mail/templates.ts";
import { assertLastingAccess, type IssuedSession, issueSession, type RequestInfo, type ResolvedSession, userChanged, userRow } from "../../core/index.ts";
import * as challenges from "./challenges.ts";
import { backupCodeDigest, findEnrollment, type Enrollment } from "./enrollment.service.ts";
import { totpStep } from "./totp.ts";

/**
 * The second step, for a pending sign-in (the `two_factor` cookie) or a signed-in session
 * (better-auth's two contexts: the session wins when both are present). A pending sign-in ends
 * in a new session; a session's check answers with that session (and activates a new TOTP
 * enrollment).
 */
export type Subject =
  | { kind: "session"; auth: ResolvedSession; token: string }
  | { kind: "sign-in"; pendingToken: string | null; trustDevice: boolean };

export interface Verified {
  user: UserRow;
  /** The session's token, or the new one of a completed sign-in. */
  token: string;
  issued: IssuedSession | null;
  /** New trusted-device token (trustDevice: true on a completed sign-in). */
  trustToken: string | null;
}

/** NIST SP 800-63B §5.2.2: consecutive failures across pending sign-ins lock the second step a while. */
const ACCOUNT_MAX_FAILURES = 10;
const ACCOUNT_LOCK_MS = 15 * 60 * 1000;
export const OTP_TTL_SEC = 5 * 60;

function assertNotLocked(app: App, enrollment: Enrollment | null): void {
  if (enrollment?.lockedUntil && enrollment.lockedUntil.getTime() > app.clock.now().getTime()) {
    throw new AuthError("ACCOUNT_TEMPORARILY_LOCKED");
  }
}

async function recordFailure(app: App, em: EntityManager, enrollment: Enrollment | null): Promise<void> {
  if (!enrollment) return;
  await em.nativeUpdate(TwoFactor, { id: enrollment.id }, { failedCount: raw("failed_count + 1") });
  const lockedUntil = new Date(app.clock.now().getTime() + ACCOUNT_LOCK_MS);
  await em.nativeUpdate(TwoFactor, { id: enrollment.id, failedCount: { $gte: ACCOUNT_MAX_FAILURES } }, { lockedUntil, failedCount: 0 });
}

async function loadUser(em: EntityManager, userId: string): Promise<UserRow> {
  const user = await em.findOne(User, { id: userId }, { disableIdentityMap: true });
  if (!user) throw new AuthError("INVALID_TWO_FACTOR_COOKIE");
  return userRow(user);
}

/** Who is verifying, read once per request: the session's user, or the pending sign-in's. */
interface Resolved {
  userId: string;
  /** The pending sign-in (sign-in context only). */
  pending: challenges.Challenge | null;
  enrollment: Enrollment | null;
}

async function resolve(app: App, em: EntityManager, subject: Subject): Promise<Resolved> {
  if (subject.kind === "session") {
    const userId = subject.auth.user.id;
    return { userId, pending: null, enrollment: await findEnrollment(app, em, userId) };
  }
  const pending = await challenges.getPendingSignIn(app, em, subject.pendingToken);
  return { userId: pending.userId, pending, enrollment: await findEnrollment(app, em, pending.userId) };
}

/**
 * Runs one verification: `check` decides inside the transaction that also ends a pending sign-in
 * (single-use) and issues its session, so a code accepted for a sign-in that another request has
 * just completed rolls back with it. A wrong code counts against the pending sign-in (5) and the
 * account (10 in a row); the sixth try on one sign-in finds it gone.
 */
async function verify(
  app: App,
  em: EntityManager,
  req: RequestInfo,
  subject: Subject,
  { pending, enrollment }: Resolved,
  check: (tx: EntityManager) => Promise<boolean>,
  failure: "INVALID_CODE" | "INVALID_BACKUP_CODE",
): Promise<Verified> {
  if (subject.kind === "session" || !pending) {
    if (subject.kind !== "session" || !(await inTransaction(em, check))) throw new AuthError(failure);
    return { user: subject.auth.user, token: subject.token, issued: null, trustToken: null };
  }
  assertNotLocked(app, enrollment);
  await challenges.spendAttempt(app, em, pending);
  const done = await inTransaction(em, async (tx) => {
    if (!(await check(tx))) return null;
    await challenges.consumeChallenge(app, tx, pending);
    // A first factor, then a code (TOTP, mailed or backup): RFC 8176 `mfa` with the method proven here.
    const issued = await issueSession(app, tx, req, { userId: pending.userId, rememberMe: pending.rememberMe, amr: ["mfa", "otp"] });
    const trustToken = subject.trustDevice ? await challenges.trustDevice(app, tx, pending.userId) : null;
    return { issued, trustToken };
  });
  if (!done) {
    await recordFailure(app, em, enrollment);
    throw new AuthError(failure);
  }
  if (enrollment && enrollment.failedCount > 0) await em.nativeUpdate(TwoFactor, { id: enrollment.id }, { failedCount: 0 });
  return { user: await loadUser(em, pending.userId), token: done.issued.token, issued: done.issued, trustToken: done.trustToken };
}

/** Two-factor on for the user (cached sessions carry the row: they go). */
async function turnOn(app: App, tx: EntityManager, userId: string): Promise<void> {
  await tx.nativeUpdate(User, { id: userId }, { twoFactorEnabled: true, updatedAt: app.clock.now() });
  userChanged(app, tx, userId);
}

/** The answer of the check that turned two-factor on. */
function activated(verified: Verified): Verified {
  return { ...verified, user: { ...verified.user, twoFactorEnabled: true } };
}

/**
 * POST /two-factor/verify-totp. A code is accepted once: the step it belongs to is recorded by a
 * conditional update that only moves forward (RFC 6238 §5.2), so a replay in the same window, or
 * the same code racing in two requests, fails for all but one.
 */
export async function verifyTotp(app: App, em: EntityManager, req: RequestInfo, subject: Subject, code: string): Promise<Verified> {
  const resolved = await resolve(app, em, subject);
  const { userId, enrollment } = resolved;
  if (!enrollment || (subject.kind === "sign-in" && !enrollment.verified)) throw new AuthError("TOTP_NOT_ENABLED");
  const activates = subject.kind === "session" && !enrollment.verified;
  if (activates) assertLastingAccess(subject.auth);
  const verified = await verify(app, em, req, subject, resolved, async (tx) => {
    const step = totpStep(enrollment.secret, code, app.clock.now().getTime());
    if (step === null) return false;
    const moved = await tx.nativeUpdate(
      TwoFactor,
      { id: enrollment.id, $or: [{ lastTotpStep: null }, { lastTotpStep: { $lt: step } }] },
      { lastTotpStep: step, ...(activates ? { verified: true } : {}), updatedAt: app.clock.now() },
    );
    if (moved !== 1) return false;
    if (activates) await turnOn(app, tx, userId);
    return true;
  }, "INVALID_CODE");
  return activates ? activated(verified) : verified;
}

/** POST /two-factor/verify-backup-code: a code is one row, and using it is one conditional delete. */
export async function verifyBackupCode(app: App, em: EntityManager, req: RequestInfo, subject: Subject, code: string): Promise<Verified> {
  const resolved = await resolve(app, em, subject);
  if (!resolved.enrollment) throw new AuthError("BACKUP_CODES_NOT_ENABLED");
  return verify(app, em, req, subject, resolved, async (tx) =>
    (await tx.nativeDelete(TwoFactorBackupCode, { user: resolved.userId, codeHash: backupCodeDigest(code) })) === 1,
  "INVALID_BACKUP_CODE");
}

/** The holder of a mailed code: the pending sign-in, or one per signed-in session. */
async function otpHolder(app: App, em: EntityManager, subject: Subject, fresh: boolean, pending?: challenges.Challenge | null) {
  if (subject.kind === "sign-in") return pending ?? challenges.getPendingSignIn(app, em, subject.pendingToken);
  const { session, user } = subject.auth;
  if (fresh) return challenges.replaceSessionChallenge(app, em, session.id, user.id);
  const found = await challenges.findSessionChallenge(app, em, session.id);
  if (!found) throw new AuthError("OTP_HAS_EXPIRED");
  return found;
}

/** POST /two-factor/send-otp: 6 digits by mail, 5 minutes, stored as a keyed digest. */
export async function sendOtp(app: App, em: EntityManager, req: MailRequest, subject: Subject): Promise<void> {
  if (!app.config.twoFactor.otp.enabled) throw new AuthError("OTP_NOT_CONFIGURED");
  const holder = await otpHolder(app, em, subject, true);
  const user = subject.kind === "session" ? subject.auth.user : await loadUser(em, holder.userId);
  if (subject.kind === "sign-in" && !user.twoFactorEnabled) throw new AuthError("TWO_FACTOR_NOT_ENABLED");
  const code = String(randomInt(1_000_000)).padStart(6, "0");
  await challenges.storeOtp(app, em, holder, keyedDigest(`${holder.id}:${code}`, app.secret), OTP_TTL_SEC);
  app.mailer.later(async () => {
    try {
      await app.mailer.send(twoFactorOtpEmail(user.email, user.name || null, code, OTP_TTL_SEC), req);
    } catch (err) {
      app.logger.error({ requestId: req.requestId, err, mail: "two-factor-otp" }, "email not sent");
    }
  });
}

/** POST /two-factor/verify-otp: the mailed code, within 5 minutes, 5 tries, once. */
export async function verifyOtp(app: App, em: EntityManager, req: RequestInfo, subject: Subject, code: string): Promise<Verified> {
  if (!app.config.twoFactor.otp.enabled) throw new AuthError("OTP_NOT_CONFIGURED");
  const resolved = await resolve(app, em, subject);
  const holder = await otpHolder(app, em, subject, false, resolved.pending);
  if (!holder.otpHash || !holder.otpExpiresAt || holder.otpExpiresAt.getTime() <= app.clock.now().getTime()) {
    throw new AuthError("OTP_HAS_EXPIRED");
  }
  if (subject.kind === "session") await challenges.spendAttempt(app, em, holder);
  const otpHash = holder.otpHash;
  // As better-auth: a signed-in user who has enrolled (enable, with the password) may turn
  // two-factor on with a mailed code instead of a TOTP code.
  const activates = subject.kind === "session" && !subject.auth.user.twoFactorEnabled && resolved.enrollment !== null;
  if (activates) assertLastingAccess(subject.auth);
  const verified = await verify(app, em, req, subject, resolved, async (tx) => {
    if (!keyedDigestMatches(`${holder.id}:${code}`, otpHash, app.secrets)) return false;
    // The session's holder is used up here (a pending sign-in's goes with the sign-in).
    if (subject.kind === "session") await challenges.consumeChallenge(app, tx, holder);
    if (activates) await turnOn(app, tx, holder.userId);
    return true;
  }, "INVALID_CODE");
  return activates ? activated(verified) : verified;
}
