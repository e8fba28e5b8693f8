import { randomUUID } from "node:crypto";
import { raw } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { TwoFactorChallenge } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { PENDING_TTL_SEC, TRUST_TTL_SEC } from "../../trpc/second-step.ts";

/**
 * Two-factor state that lives in a browser cookie and, as its SHA-256, in `two_factor_challenges`
 * (the cookie is the browser binding, like the OAuth state cookie):
 * - a pending sign-in (`two_factor` cookie, 5 minutes, single-use, 5 verification attempts);
 * - a trusted device (`trust_device` cookie, 30 days, bound to its user, rotated on every use);
 * - the mailed code of a signed-in user (`session` kind, keyed by the session id, 5 attempts).
 */
export const MAX_ATTEMPTS = 5;

export type ChallengeKind = "sign-in" | "trusted-device" | "session";

export interface Challenge {
  id: string;
  userId: string;
  rememberMe: boolean;
  otpHash: string | null;
  otpExpiresAt: Date | null;
}

const sessionKey = (sessionId: string) => sha256(`session:${sessionId}`);

async function insertChallenge(app: App, em: EntityManager, kind: ChallengeKind, tokenHash: string, userId: string, ttlSec: number, rememberMe = true) {
  const now = app.clock.now();
  await em.insert(TwoFactorChallenge, {
    id: randomUUID(),
    tokenHash,
    kind,
    user: userId,
    rememberMe,
    attempts: 0,
    expiresAt: new Date(now.getTime() + ttlSec * 1000),
    createdAt: now,
  });
}

/** A pending sign-in for `userId`: the raw token goes into the `two_factor` cookie, never stored. */
export async function createPendingSignIn(app: App, em: EntityManager, userId: string, rememberMe: boolean): Promise<string> {
  const token = randomToken();
  await insertChallenge(app, em, "sign-in", sha256(token), userId, PENDING_TTL_SEC, rememberMe);
  return token;
}

async function findLive(app: App, em: EntityManager, kind: ChallengeKind, tokenHash: string): Promise<Challenge | null> {
  const row = await em.findOne(
    TwoFactorChallenge,
    { tokenHash, kind, expiresAt: { $gt: app.clock.now() } },
    { disableIdentityMap: true },
  );
  if (!row) return null;
  return { id: row.id, userId: row.user.id, rememberMe: row.rememberMe, otpHash: row.otpHash ?? null, otpExpiresAt: row.otpExpiresAt ?? null };
}

/** The live pending sign-in the cookie names; 401 INVALID_TWO_FACTOR_COOKIE otherwise. */
export async function getPendingSignIn(app: App, em: EntityManager, token: string | null): Promise<Challenge> {
  const found = token && token.length <= 200 ? await findLive(app, em, "sign-in", sha256(token)) : null;
  if (!found) throw new AuthError("INVALID_TWO_FACTOR_COOKIE");
  return found;
}

/** The mailed-code holder of a signed-in session, if one was sent. */
export function findSessionChallenge(app: App, em: EntityManager, sessionId: string): Promise<Challenge | null> {
  return findLive(app, em, "session", sessionKey(sessionId));
}

/** A fresh holder for a signed-in session's mailed code (the previous one, if any, is dropped). */
export async function replaceSessionChallenge(app: App, em: EntityManager, sessionId: string, userId: string): Promise<Challenge> {
  const tokenHash = sessionKey(sessionId);
  await em.nativeDelete(TwoFactorChallenge, { tokenHash });
  await insertChallenge(app, em, "session", tokenHash, userId, PENDING_TTL_SEC);
  const found = await findLive(app, em, "session", tokenHash);
  if (!found) throw new AuthError("INVALID_TWO_FACTOR_COOKIE");
  return found;
}

/**
 * Spends one of the challenge's attempts before any code is checked: one conditional update, so
 * concurrent guesses cannot share an attempt. The sixth try finds none left: the challenge is
 * deleted (a pending sign-in must start over with the password) and the answer is 400
 * TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE (better-auth's code).
 */
export async function spendAttempt(app: App, em: EntityManager, challenge: Challenge): Promise<void> {
  const now = app.clock.now();
  const spent = await em.nativeUpdate(
    TwoFactorChallenge,
    { id: challenge.id, attempts: { $lt: MAX_ATTEMPTS }, expiresAt: { $gt: now } },
    { attempts: raw("attempts + 1") },
  );
  if (spent === 1) return;
  const deleted = await em.nativeDelete(TwoFactorChallenge, { id: challenge.id });
  throw new AuthError(deleted === 1 ? "TOO_MANY_ATTEMPTS_REQUEST_NEW_CODE" : "INVALID_TWO_FACTOR_COOKIE");
}

/** Uses the challenge up (inside the caller's transaction): only the request whose delete removed it goes on. */
export async function consumeChallenge(app: App, tx: EntityManager, challenge: Challenge): Promise<void> {
  const deleted = await tx.nativeDelete(TwoFactorChallenge, { id: challenge.id, expiresAt: { $gt: app.clock.now() } });
  if (deleted !== 1) throw new AuthError("INVALID_TWO_FACTOR_COOKIE");
}

export async function storeOtp(app: App, em: EntityManager, challenge: Challenge, otpHash: string, ttlSec: number): Promise<void> {
  const otpExpiresAt = new Date(app.clock.now().getTime() + ttlSec * 1000);
  await em.nativeUpdate(TwoFactorChallenge, { id: challenge.id }, { otpHash, otpExpiresAt });
}

/** A new trusted device for `userId`: the raw token goes into the `trust_device` cookie. */
export async function trustDevice(app: App, tx: EntityManager, userId: string): Promise<string> {
  const token = randomToken();
  await insertChallenge(app, tx, "trusted-device", sha256(token), userId, TRUST_TTL_SEC);
  return token;
}

/**
 * The device's trust, when its cookie names a live trusted device of `userId`: used up and
 * replaced by a new token (rotation: a copied cookie works once, for whoever is first).
 */
export async function rotateTrustedDevice(app: App, tx: EntityManager, userId: string, token: string | null): Promise<string | null> {
  if (!token || token.length > 200) return null;
  const deleted = await tx.nativeDelete(TwoFactorChallenge, {
    tokenHash: sha256(token),
    kind: "trusted-device",
    user: userId,
    expiresAt: { $gt: app.clock.now() },
  });
  return deleted === 1 ? trustDevice(app, tx, userId) : null;
}
