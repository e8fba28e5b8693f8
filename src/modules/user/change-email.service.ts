import { UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";
import { actionLink } from "../../mail/links.ts";
import type { MailRequest } from "../../mail/mailer.ts";
import { changeEmailConfirmationEmail, verificationEmail } from "../../mail/templates.ts";
import { addressChanged, consumeToken, issueToken, mailTokenLater, parseEmail, sendVerificationLater, userChanged, userRow } from "../../core/index.ts";

/**
 * POST /change-email (docs/wire-contract.md §9, better-auth's flow with `updateEmailWithoutVerification`
 * and `sendChangeEmailConfirmation`):
 * - unverified address: nothing proven is lost, so the email moves at once (still unverified)
 *   and a verification link goes to the new address;
 * - verified address: a link to the current address approves the change first
 *   (change-email-confirmation); using it mails a link to the new address
 *   (change-email-verification), and using that moves the email, verified.
 * A taken address answers like a free one and gets no mail.
 */
const CONFIRM = "change-email-confirmation";
const VERIFY = "change-email-verification";

interface ChangeValue {
  userId: string;
  /** The address the user had when the change was asked for: the links do nothing once it differs. */
  email: string;
  newEmail: string;
}

export async function requestChangeEmail(app: App, em: EntityManager, req: MailRequest, user: UserRow, rawNewEmail: string, callbackURL: string | undefined): Promise<void> {
  if (!app.config.user.changeEmail.enabled) throw new AuthError("CHANGE_EMAIL_DISABLED");
  const newEmail = parseEmail(rawNewEmail);
  if (newEmail === user.email) throw new AuthError("EMAIL_IS_THE_SAME");
  if (!user.emailVerified) {
    const moved = await moveEmail(app, em, { userId: user.id, email: user.email, newEmail }, false);
    if (moved) sendVerificationLater(app, req, moved, callbackURL);
    return;
  }
  mailLink(app, req, CONFIRM, user, { userId: user.id, email: user.email, newEmail }, callbackURL);
}

/**
 * After the answer (the same for every address): a link of `purpose` to `to`, unless the new
 * address is taken by then or the current address has used up its change-email mails.
 */
function mailLink(app: App, req: MailRequest, purpose: typeof CONFIRM | typeof VERIFY, to: { email: string; name: string }, value: ChangeValue, callbackURL: string | undefined) {
  mailTokenLater(app, req, purpose, async (em) => {
    if (!(await app.addressLimiter.allow("change-email", value.email))) return null;
    if (purpose === CONFIRM && (await em.count(User, { email: value.newEmail })) > 0) return null;
    const ttlSec = app.config.emailVerification.tokenExpiresInSec;
    const issued = await issueToken(app, em, purpose, value, ttlSec);
    const link = actionLink(app, "/verify-email", { token: issued.token, callbackURL });
    const message =
      purpose === CONFIRM
        ? changeEmailConfirmationEmail(to.email, to.name, value.newEmail, link, ttlSec)
        : verificationEmail(value.newEmail, to.name, link, ttlSec);
    return { issued, message };
  });
}

/**
 * Moves the address when the user still has `email`, and drops every link mailed to the old
 * address (verification, reset, change-email, delete-account): they went to a mailbox that is
 * no longer the account's. null when the user's address changed meanwhile or `newEmail` is taken.
 */
async function moveEmail(app: App, em: EntityManager, value: ChangeValue, verified: boolean): Promise<UserRow | null> {
  const now = app.clock.now();
  try {
    // A savepoint inside applyChangeEmail's transaction: a taken address fails the update, and
    // PostgreSQL would otherwise abort the whole transaction (the token is used up all the same).
    const moved = await inTransaction(em, async (tx) => {
      const updated = await tx.nativeUpdate(User, { id: value.userId, email: value.email }, { email: value.newEmail, emailVerified: verified, updatedAt: now });
      if (updated !== 1) return null;
      await addressChanged(tx, value.userId);
      userChanged(app, tx, value.userId);
      return tx.findOne(User, { id: value.userId }, { disableIdentityMap: true });
    }, { savepoint: true });
    return moved ? userRow(moved) : null;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return null;
    throw err;
  }
}

/** Step 1 used: mail the new address its link (after the answer). INVALID_TOKEN when bad, used, expired or stale. */
export async function confirmChangeEmail(app: App, em: EntityManager, req: MailRequest, token: string, callbackURL: string | undefined): Promise<void> {
  const value = await consumeToken<ChangeValue>(app, em, CONFIRM, token);
  const user = value && (await em.findOne(User, { id: value.userId, email: value.email }));
  if (!value || !user) throw new AuthError("INVALID_TOKEN");
  mailLink(app, req, VERIFY, user, value, callbackURL);
}

/** Step 2 used: the address moves, verified. INVALID_TOKEN when bad, used, expired, stale or the address was taken meanwhile. */
export async function applyChangeEmail(app: App, em: EntityManager, token: string): Promise<UserRow> {
  const user = await inTransaction(em, async (tx) => {
    const value = await consumeToken<ChangeValue>(app, tx, VERIFY, token);
    return value ? moveEmail(app, tx, value, true) : null;
  });
  if (!user) throw new AuthError("INVALID_TOKEN");
  return user;
}
