import { escapeHtml } from "../security/html.ts";
import type { EmailOtpType, MailContent, MailDraft, MailKind, MailTemplate, MailTemplateInput } from "./types.ts";

/**
 * What the features send (drafts: kind, recipient, link or code) and the built-in English text
 * of each kind. `email.templates.<kind>` replaces a built-in one (mailer.ts picks).
 */

function minutes(seconds: number): string {
  const m = Math.round(seconds / 60);
  return m === 1 ? "1 minute" : `${m} minutes`;
}

interface LinkText {
  subject: string;
  intro: string;
  action: string;
  outro: string;
}

/** Plain text first (some clients show only that), plus a minimal HTML part with one button. */
function linkMail(name: string | null, link: string, t: LinkText): MailContent {
  const greeting = name ? `Hello ${name},` : "Hello,";
  const text = `${greeting}\n\n${t.intro}\n\n${link}\n\n${t.outro}\n`;
  const html = [
    "<!doctype html>",
    '<html><body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(t.intro)}</p>`,
    `<p><a href="${escapeHtml(link)}" style="display: inline-block; padding: 8px 16px; background: #1f2937; color: #fff; text-decoration: none; border-radius: 4px">${escapeHtml(t.action)}</a></p>`,
    `<p style="font-size: 12px; color: #555">Or open this link: ${escapeHtml(link)}</p>`,
    `<p>${escapeHtml(t.outro)}</p>`,
    "</body></html>",
  ].join("\n");
  return { subject: t.subject, text, html };
}

const url = (input: MailTemplateInput) => input.url ?? "";

interface CodeText {
  subject: string;
  intro: string;
  outro: string;
}

/** A one-time code on a line of its own (text) and in large type (HTML); the subject carries it too. */
function codeMail(m: MailTemplateInput, t: CodeText): MailContent {
  const code = m.code ?? "";
  const greeting = m.name ? `Hello ${m.name},` : "Hello,";
  const html = [
    "<!doctype html>",
    '<html><body style="font-family: sans-serif; line-height: 1.5">',
    `<p>${escapeHtml(greeting)}</p>`,
    `<p>${escapeHtml(t.intro)}</p>`,
    `<p style="font-size: 24px; letter-spacing: 4px; font-family: monospace">${escapeHtml(code)}</p>`,
    `<p>${escapeHtml(t.outro)}</p>`,
    "</body></html>",
  ].join("\n");
  return { subject: `${t.subject}: ${code}`, text: `${greeting}\n\n${t.intro}\n\n${code}\n\n${t.outro}\n`, html };
}

/** The built-in text of every kind (English; `locale` is for the operator's own templates). */
export const DEFAULT_TEMPLATES: Record<MailKind, MailTemplate> = {
  verification: (m) =>
    linkMail(m.name, url(m), {
      subject: "Verify your email address",
      intro: "Confirm your email address by opening this link:",
      action: "Verify email",
      outro: `The link expires in ${minutes(m.expiresInSec)}. If you did not create an account, ignore this email.`,
    }),
  resetPassword: (m) =>
    linkMail(m.name, url(m), {
      subject: "Reset your password",
      intro: "Choose a new password by opening this link:",
      action: "Reset password",
      outro: `The link expires in ${minutes(m.expiresInSec)} and works once. If you did not ask for a reset, ignore this email: your password stays as it is.`,
    }),
  changeEmail: (m) =>
    linkMail(m.name, url(m), {
      subject: "Confirm your new email address",
      intro: `Someone (hopefully you) asked to change the email address of your account to ${m.newEmail ?? ""}. Approve the change by opening this link; a verification link then goes to the new address:`,
      action: "Approve the change",
      outro: `The link expires in ${minutes(m.expiresInSec)}. If you did not ask for this, ignore this email and consider changing your password: your address stays as it is.`,
    }),
  deleteAccount: (m) =>
    linkMail(m.name, url(m), {
      subject: "Confirm the deletion of your account",
      intro: "Open this link in the browser where you are signed in to delete your account. This cannot be undone:",
      action: "Delete my account",
      outro: `The link expires in ${minutes(m.expiresInSec)} and works once. If you did not ask for this, ignore this email: nothing is deleted.`,
    }),
  // The code, no link: nothing to click that a mail scanner could use up.
  twoFactorOtp: (m) =>
    codeMail(m, {
      subject: "Your verification code",
      intro: "Your sign-in verification code is:",
      outro: `It expires in ${minutes(m.expiresInSec)} and works once. If you are not signing in, someone knows your password: change it.`,
    }),
  magicLink: (m) =>
    linkMail(m.name, url(m), {
      subject: "Your sign-in link",
      intro: "Sign in by opening this link:",
      action: "Sign in",
      outro: `The link expires in ${minutes(m.expiresInSec)} and works once. If you did not ask to sign in, ignore this email.`,
    }),
  emailOtp: (m) => codeMail(m, OTP_TEXT[m.otpType ?? "sign-in"](m.expiresInSec)),
  organizationInvitation: (m) => {
    const org = typeof m.metadata?.organizationName === "string" ? m.metadata.organizationName : "an organization";
    const inviter = typeof m.metadata?.inviterName === "string" ? m.metadata.inviterName : "Someone";
    const hours = Math.round(m.expiresInSec / 3600);
    return linkMail(m.name, url(m), {
      subject: `You are invited to join ${org}`,
      intro: `${inviter} invited you to join ${org}. Open this link to accept or decline:`,
      action: "Open the invitation",
      outro: `The invitation expires in ${hours === 1 ? "1 hour" : `${hours} hours`}. You accept it signed in with this address, once it is verified. If you did not expect it, ignore this email.`,
    });
  },
};

/** The emailOtp wording per code type. */
const OTP_TEXT: Record<EmailOtpType, (expiresInSec: number) => CodeText> = {
  "sign-in": (s) => ({
    subject: "Your sign-in code",
    intro: "Your sign-in code is:",
    outro: `It expires in ${minutes(s)} and works once. If you did not ask to sign in, ignore this email.`,
  }),
  "email-verification": (s) => ({
    subject: "Your verification code",
    intro: "Confirm your email address with this code:",
    outro: `It expires in ${minutes(s)} and works once. If you did not create an account, ignore this email.`,
  }),
  "forget-password": (s) => ({
    subject: "Your password reset code",
    intro: "Choose a new password with this code:",
    outro: `It expires in ${minutes(s)} and works once. If you did not ask for a reset, ignore this email: your password stays as it is.`,
  }),
};

export function verificationEmail(to: string, name: string | null, link: string, expiresInSec: number): MailDraft {
  return { kind: "verification", to, name, url: link, expiresInSec };
}

export function resetPasswordEmail(to: string, name: string | null, link: string, expiresInSec: number): MailDraft {
  return { kind: "resetPassword", to, name, url: link, expiresInSec };
}

/** change-email of a verified user, step 1: mailed to the current address. */
export function changeEmailConfirmationEmail(to: string, name: string | null, newEmail: string, link: string, expiresInSec: number): MailDraft {
  return { kind: "changeEmail", to, name, newEmail, url: link, expiresInSec };
}

/** delete-user without a fresh session or the password: the confirmation link. */
export function deleteAccountEmail(to: string, name: string | null, link: string, expiresInSec: number): MailDraft {
  return { kind: "deleteAccount", to, name, url: link, expiresInSec };
}

/** Two-factor email OTP. */
export function twoFactorOtpEmail(to: string, name: string | null, code: string, expiresInSec: number): MailDraft {
  return { kind: "twoFactorOtp", to, name, code, expiresInSec };
}

/** A magic sign-in link (`metadata`: what the sign-in request passed, for the operator's template or send hook). */
export function magicLinkEmail(to: string, name: string | null, link: string, expiresInSec: number, metadata?: Record<string, unknown>): MailDraft {
  return { kind: "magicLink", to, name, url: link, expiresInSec, ...(metadata ? { metadata } : {}) };
}

/** A one-time code of email-otp. */
export function emailOtpEmail(to: string, name: string | null, code: string, otpType: EmailOtpType, expiresInSec: number): MailDraft {
  return { kind: "emailOtp", to, name, code, otpType, expiresInSec };
}

/** An invitation into an organization: the app's accept page, and what the template may show. */
export function organizationInvitationEmail(to: string, link: string, expiresInSec: number, metadata: Record<string, unknown>): MailDraft {
  return { kind: "organizationInvitation", to, name: null, url: link, expiresInSec, metadata };
}
