import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import type { ResolvedConfig } from "../../config/index.ts";
import { User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import { actionLink } from "../../mail/links.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { verificationEmail } from "../../mail/templates.ts";
import { parseEmail } from "../../core/identity.ts";
import { consumeToken, issuedRecently, issueToken, mailTokenLater } from "../../core/single-use-tokens.ts";

const PURPOSE = "email-verification";

/** At most one verification mail per user per minute, however it is asked for. */
export const RESEND_INTERVAL_SEC = 60;

interface Recipient {
  id: string;
  email: string;
  name: string;
}

interface VerificationValue {
  userId: string;
  /** The address the link proves; a link for an address the user no longer has verifies nothing. */
  email: string;
}

export function sendsVerificationOnSignUp(config: ResolvedConfig): boolean {
  return config.emailVerification.sendOnSignUp ?? config.emailAndPassword.requireEmailVerification;
}

async function prepareVerification(app: App, em: EntityManager, user: Recipient, callbackURL: string | undefined) {
  if (await issuedRecently(app, em, PURPOSE, user.id, RESEND_INTERVAL_SEC)) return null;
  const ttlSec = app.config.emailVerification.tokenExpiresInSec;
  const value: VerificationValue = { userId: user.id, email: user.email };
  const issued = await issueToken(app, em, PURPOSE, value, ttlSec);
  const link = actionLink(app, "/verify-email", { token: issued.token, callbackURL });
  return { issued, message: verificationEmail(user.email, user.name, link, ttlSec) };
}

/** Sign-up (after its commit) and the sign-in of an unverified user. */
export function sendVerificationLater(app: App, req: MailRequest, user: Recipient, callbackURL?: string): void {
  mailTokenLater(app, req, PURPOSE, (em) => prepareVerification(app, em, user, callbackURL));
}

/**
 * POST /send-verification-email. The answer is decided before the lookup: unknown and already
 * verified addresses answer exactly like a known unverified one, in the same time, and simply
 * get no mail. A signed-in caller may only ask for its own, unverified address (better-auth's
 * EMAIL_MISMATCH and EMAIL_ALREADY_VERIFIED: they tell the caller only about itself).
 */
export function requestVerificationEmail(app: App, req: MailRequest, rawEmail: string, callbackURL: string | undefined, signedIn?: UserRow): void {
  const email = parseEmail(rawEmail);
  if (signedIn && signedIn.email !== email) throw new AuthError("EMAIL_MISMATCH");
  if (signedIn?.emailVerified) throw new AuthError("EMAIL_ALREADY_VERIFIED");
  mailTokenLater(app, req, PURPOSE, async (em) => {
    // Counted before the lookup: unknown addresses spend their budget like known ones.
    if (!(await app.addressLimiter.allow(PURPOSE, email))) return null;
    const user = await em.findOne(User, { email });
    if (!user || user.emailVerified) return null;
    return prepareVerification(app, em, user, callbackURL);
  });
}

/** GET /verify-email: uses the token up and marks the address verified, in one transaction. */
export async function verifyEmail(app: App, em: EntityManager, token: string): Promise<void> {
  const now = app.clock.now();
  const userId = await inTransaction(em, async (tx) => {
    const value = await consumeToken<VerificationValue>(app, tx, PURPOSE, token);
    if (!value) return null;
    const updated = await tx.nativeUpdate(User, { id: value.userId, email: value.email }, { emailVerified: true, updatedAt: now });
    return updated === 1 ? value.userId : null;
  });
  if (!userId) throw new AuthError("INVALID_TOKEN");
  // Cached sessions carry the user row: drop them so get-session shows emailVerified at once.
  app.sessionCache.evictUser(userId);
}
