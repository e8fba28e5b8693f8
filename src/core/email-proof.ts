import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import type { ResolvedConfig } from "../config/index.ts";
import { actionLink } from "../mail/links.ts";
import type { MailRequest } from "../mail/mailer.ts";
import { verificationEmail } from "../mail/templates.ts";
import type { PreparedMail } from "./registry.ts";
import { issuedRecently, issueToken, mailTokenLater } from "./single-use-tokens.ts";

/**
 * Email proof: the verification link (docs/wire-contract.md §4). Sign-up, the sign-in of an
 * unverified user and change-email mail it; GET /verify-email (the verification family) uses
 * it up, or hands a link of another kind to the family that registered it (core/registry.ts EmailLink).
 * A family may register another proof that replaces the link (core/registry.ts EmailProof).
 */
export const EMAIL_VERIFICATION = "email-verification";

/** At most one verification mail per user per minute, however it is asked for. */
export const RESEND_INTERVAL_SEC = 60;

export interface Recipient {
  id: string;
  email: string;
  name: string;
}

export interface VerificationValue {
  userId: string;
  /** The address the link proves; a link for an address the user no longer has verifies nothing. */
  email: string;
}

export function sendsVerificationOnSignUp(config: ResolvedConfig): boolean {
  return config.emailVerification.sendOnSignUp ?? config.emailAndPassword.requireEmailVerification;
}

/**
 * The proof a family registered in place of the link for this configuration (core/registry.ts
 * EmailProof: email-otp's code with `overrideDefaultEmailVerification`), or null for the link.
 */
function proofInsteadOfLink(app: App) {
  return app.registry.emailProofs.find((p) => p.replacesLink(app)) ?? null;
}

/**
 * The token and mail of a verification link, or null when one went out less than a minute ago;
 * or, when a family's proof replaces the link, that family's mail (a code, with its own throttle).
 */
export async function prepareVerification(app: App, em: EntityManager, user: Recipient, callbackURL: string | undefined): Promise<PreparedMail | null> {
  const proof = proofInsteadOfLink(app);
  if (proof) return proof.prepare(app, em, user);
  if (await issuedRecently(app, em, EMAIL_VERIFICATION, user.id, RESEND_INTERVAL_SEC)) return null;
  const ttlSec = app.config.emailVerification.tokenExpiresInSec;
  const value: VerificationValue = { userId: user.id, email: user.email };
  const issued = await issueToken(app, em, EMAIL_VERIFICATION, value, ttlSec);
  const link = actionLink(app, "/verify-email", { token: issued.token, callbackURL });
  return { issued, message: verificationEmail(user.email, user.name, link, ttlSec) };
}

/** After the answer: a verification link to `user` (sign-up after its commit, the sign-in of an unverified user, change-email). */
export function sendVerificationLater(app: App, req: MailRequest, user: Recipient, callbackURL?: string): void {
  mailTokenLater(app, req, EMAIL_VERIFICATION, (em) => prepareVerification(app, em, user, callbackURL));
}
