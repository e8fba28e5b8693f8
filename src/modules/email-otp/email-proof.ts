import type { EmailProof } from "../../core/index.ts";
import { RESEND_INTERVAL_SEC } from "../../core/index.ts";
import { emailOtpEmail } from "../../mail/templates.ts";
import { deleteCode, sentRecently, storeCode } from "./codes.ts";

/**
 * `emailOTP.overrideDefaultEmailVerification` (better-auth's option of that name): every
 * verification mail the kernel sends (core/email-proof.ts) is an email-verification code instead
 * of a link, at most one a minute per address like the link; POST /email-otp/verify-email takes it.
 */
export const emailOtpProof: EmailProof = {
  family: "email-otp",
  replacesLink: (app) => app.config.emailOTP.enabled && app.config.emailOTP.overrideDefaultEmailVerification,
  async prepare(app, em, user) {
    if (await sentRecently(app, em, user.email, "email-verification", RESEND_INTERVAL_SEC)) return null;
    const stored = await storeCode(app, em, user.email, "email-verification");
    if (!stored) return null;
    const message = emailOtpEmail(user.email, user.name || null, stored.code, "email-verification", app.config.emailOTP.expiresIn);
    return { message, undo: (e) => deleteCode(e, stored.id) };
  },
};
