import { z } from "zod";
import type { MailSendHook, MailTemplate } from "./types.ts";

/** One `email.templates` entry: a function, checked when it runs (src/mail/mailer.ts). */
const mailTemplate = z.custom<MailTemplate>((v) => typeof v === "function", "must be a function").optional();

/** The `email` section of the config (src/config/schema.ts). */
export const emailConfig = z
  .object({
    /** `smtp://user:pass@host:587` or `smtps://...`; without it (and without a send hook) mails go to the log. */
    smtpUrl: z
      .string()
      .refine((v) => /^smtps?:\/\//.test(v) && URL.canParse(v), "must be smtp://... or smtps://...")
      .optional(),
    /** The `From` of every mail. */
    from: z.string().min(1).default("Portcullis <no-reply@localhost>"),
    /**
     * `async ({ kind, to, subject, text, html, url, code, otpType, metadata, locale }) => {}`: delivers every mail
     * instead of SMTP (a transactional mail API, a queue); a throw counts as a failed send.
     */
    send: z.custom<MailSendHook>((v) => typeof v === "function", "must be a function").optional(),
    /**
     * Per mail kind, `({ to, name, url, code, otpType, metadata, newEmail, expiresInSec, locale, locales }) => ({ subject, text, html? })`
     * (may be async) in place of the built-in English text; `locale` comes from the request's Accept-Language.
     */
    templates: z
      .object({
        /** The email verification link (sign-up, send-verification-email, a changed address). */
        verification: mailTemplate,
        /** The password reset link. */
        resetPassword: mailTemplate,
        /** change-email of a verified user: the approval link mailed to the current address (`newEmail` set). */
        changeEmail: mailTemplate,
        /** delete-user: the confirmation link. */
        deleteAccount: mailTemplate,
        /** The two-factor sign-in code (`code`, no `url`). */
        twoFactorOtp: mailTemplate,
        /** The magic sign-in link (`url`; `metadata` as the sign-in request gave it). */
        magicLink: mailTemplate,
        /** A one-time code of email-otp (`code`, no `url`; `otpType`: sign-in, email-verification or forget-password). */
        emailOtp: mailTemplate,
        /** An invitation into an organization (`url`: the app's accept page with `?invitationId=`; `metadata`: the organization, role and inviter). */
        organizationInvitation: mailTemplate,
      })
      .strict()
      .prefault({}),
    /**
     * Write each mail's link or code to the log when there is neither SMTP nor `send`. Unset:
     * on outside production; in production off (the links are live credentials) and such mails fail, logged.
     */
    logLinks: z.boolean().optional(),
  })
  .strict()
  .prefault({});
