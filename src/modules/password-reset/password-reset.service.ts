import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { hashPassword } from "../../crypto/password.ts";
import { User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { actionLink } from "../../mail/links.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { resetPasswordEmail } from "../../mail/templates.ts";
import { checkPasswordLength, consumeToken, findLiveToken, issueToken, mailTokenLater, parseEmail, resetPasswordOf } from "../../core/index.ts";

const PURPOSE = "password-reset";

interface ResetValue {
  userId: string;
  /**
   * The address the link was mailed to: once the user's address differs, the link is refused
   * (it went to a mailbox that is no longer the account's). Absent from links imported from
   * better-auth, which stay bound to their user only (every address change removes them).
   */
  email?: string;
}

/** The link still speaks for the user's mailbox: no address in it, or the user's address now. */
const boundTo = (value: ResetValue, user: { email: string }) => value.email === undefined || value.email === user.email;

/** better-auth's wording; the same whether or not the address has an account. */
export const RESET_REQUESTED_MESSAGE = "If this email exists in our system, check your email for the reset link";

/**
 * POST /request-password-reset. Only the address format is checked in the request; the user
 * lookup, the token and the SMTP send run after the answer (mailTokenLater), so a known and an
 * unknown address get the same body in the same time.
 */
export function requestPasswordReset(app: App, req: MailRequest, rawEmail: string, redirectTo: string | undefined): void {
  const email = parseEmail(rawEmail);
  mailTokenLater(app, req, PURPOSE, async (em) => {
    // Counted before the lookup: unknown addresses spend their budget like known ones.
    if (!(await app.addressLimiter.allow(PURPOSE, email))) return null;
    const user = await em.findOne(User, { email });
    if (!user) return null;
    const ttlSec = app.config.emailAndPassword.resetPasswordTokenExpiresInSec;
    const issued = await issueToken<ResetValue>(app, em, PURPOSE, { userId: user.id, email: user.email }, ttlSec);
    const link = actionLink(app, `/reset-password/${issued.token}`, { callbackURL: redirectTo });
    return { issued, message: resetPasswordEmail(user.email, user.name, link, ttlSec) };
  });
}

/** GET /reset-password/:token: is the link still good? (It stays good: the form posts it.) */
export async function isResetTokenLive(app: App, em: EntityManager, token: string): Promise<boolean> {
  const row = await findLiveToken(app, em, PURPOSE, token);
  if (!row) return false;
  const value = JSON.parse(row.value) as ResetValue;
  const user = await em.findOne(User, { id: value.userId }, { fields: ["email"], disableIdentityMap: true });
  return user !== null && boundTo(value, user);
}

/**
 * POST /reset-password. Length rules first (a too-short password keeps the token usable), a
 * read-only token check before paying for argon2, then one transaction: use the token up, set
 * the hash (creating the credential account of a user who has none), and remove everything the
 * user holds but the password: sessions, device codes, every other reset or verification link,
 * link flows. The link proves the address: an unverified one becomes verified, and the provider
 * accounts linked while nobody had proven it go too (docs/wire-contract.md §5 linking safety).
 */
export async function resetPassword(app: App, em: EntityManager, token: string, newPassword: string): Promise<void> {
  checkPasswordLength(app.config, newPassword);
  if (!(await isResetTokenLive(app, em, token))) throw new AuthError("INVALID_TOKEN");
  const passwordHash = await hashPassword(newPassword);
  await inTransaction(em, async (tx) => {
    const value = await consumeToken<ResetValue>(app, tx, PURPOSE, token);
    if (!value) throw new AuthError("INVALID_TOKEN");
    const { userId } = value;
    const user = await tx.findOne(User, { id: userId }, { disableIdentityMap: true });
    if (!user || !boundTo(value, user)) throw new AuthError("INVALID_TOKEN");
    await resetPasswordOf(app, tx, user, passwordHash);
  });
}
