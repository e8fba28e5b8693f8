import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { consumeToken, EMAIL_VERIFICATION, mailTokenLater, parseEmail, prepareVerification, userChanged, type VerificationValue } from "../../core/index.ts";

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
  mailTokenLater(app, req, EMAIL_VERIFICATION, async (em) => {
    // Counted before the lookup: unknown addresses spend their budget like known ones.
    if (!(await app.addressLimiter.allow(EMAIL_VERIFICATION, email))) return null;
    const user = await em.findOne(User, { email });
    if (!user || user.emailVerified) return null;
    return prepareVerification(app, em, user, callbackURL);
  });
}

/** GET /verify-email: uses the token up and marks the address verified, in one transaction. */
export async function verifyEmail(app: App, em: EntityManager, token: string): Promise<void> {
  const now = app.clock.now();
  const userId = await inTransaction(em, async (tx) => {
    const value = await consumeToken<VerificationValue>(app, tx, EMAIL_VERIFICATION, token);
    if (!value) return null;
    const updated = await tx.nativeUpdate(User, { id: value.userId, email: value.email }, { emailVerified: true, updatedAt: now });
    if (updated !== 1) return null;
    // Cached sessions carry the user row: they go, so get-session shows emailVerified at once.
    userChanged(app, tx, value.userId);
    return value.userId;
  });
  if (!userId) throw new AuthError("INVALID_TOKEN");
}
