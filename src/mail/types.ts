/**
 * The mails Portcullis writes, and the two config hooks around them (`email.templates`,
 * `email.send`). No imports: the config schema types its hooks with these.
 */

/** Every mail, by what it is for; `email.templates` has one optional key per kind. */
export const MAIL_KINDS = ["verification", "resetPassword", "changeEmail", "deleteAccount", "twoFactorOtp", "magicLink", "emailOtp", "organizationInvitation"] as const;
export type MailKind = (typeof MAIL_KINDS)[number];

/** What an emailOtp code is for: sign in (or sign up), verify the address, reset the password. */
export type EmailOtpType = "sign-in" | "email-verification" | "forget-password";

/** What a template is given to write one mail. */
export interface MailTemplateInput {
  kind: MailKind;
  /** The recipient. */
  to: string;
  /** The account holder's name, when known. */
  name: string | null;
  /** The action link (every kind but twoFactorOtp and emailOtp): a live, single-use credential until it expires. */
  url?: string;
  /** twoFactorOtp, emailOtp: the one-time code. */
  code?: string;
  /** emailOtp: what the code is for (better-auth's `type`). */
  otpType?: EmailOtpType;
  /**
   * magicLink: the `metadata` the sign-in request passed (better-auth's sendMagicLink argument).
   * organizationInvitation: `{ invitationId, organizationId, organizationName, organizationSlug, role, inviterName, inviterEmail }`.
   */
  metadata?: Record<string, unknown>;
  /** changeEmail: the address the account moves to. */
  newEmail?: string;
  /** How long the link or code stays valid. */
  expiresInSec: number;
  /**
   * The reader's language, best first (a BCP 47 tag as the browser sent it in Accept-Language,
   * e.g. "de-CH"); undefined when the request named none. `locales` lists every one it named, by
   * preference: pick the first you have a text for.
   */
  locale: string | undefined;
  locales: string[];
}

/** A written mail. Without `html` the mail is plain text only. */
export interface MailContent {
  subject: string;
  text: string;
  html?: string | undefined;
}

export type MailTemplate = (input: MailTemplateInput) => MailContent | Promise<MailContent>;

/** What `email.send` is given: the written mail, plus its kind, link or code and locale (to route or tag it). */
export interface MailSendInput {
  kind: MailKind;
  to: string;
  subject: string;
  text: string;
  html?: string | undefined;
  url?: string | undefined;
  code?: string | undefined;
  otpType?: EmailOtpType | undefined;
  metadata?: Record<string, unknown> | undefined;
  locale?: string | undefined;
}

/** Delivers one mail (instead of SMTP); a throw or rejection counts as a failed send. */
export type MailSendHook = (mail: MailSendInput) => void | Promise<void>;

/** A mail a feature wants sent, before the template writes it. */
export type MailDraft = Omit<MailTemplateInput, "locale" | "locales">;

/** The request a mail is sent for: its id (for the log) and its Accept-Language (for the locale). */
export interface MailRequest {
  requestId?: string | undefined;
  acceptLanguage?: string | null | undefined;
}
