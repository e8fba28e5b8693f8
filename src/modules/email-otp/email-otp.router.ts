import { publicUser } from "../../core/index.ts";
import { handOverSession, resendSessionCookie } from "../../trpc/effects.ts";
import { moduleProcedures, router } from "../../trpc/init.ts";
import { handOverSecondStep, TRUST_COOKIE } from "../../trpc/second-step.ts";
import * as schema from "./email-otp.schema.ts";
import * as service from "./email-otp.service.ts";
import { signInAudit } from "../../trpc/sign-in-audit.ts";

/** better-auth's email-otp plugin endpoints (rest-bridge/routes.ts, `// email-otp`); 404 when `emailOTP.enabled` is false. */
const procedures = moduleProcedures("emailOTP", (config) => config.emailOTP.enabled);

/** Asking for a code, or using one to sign in or set a password, is refused from an impersonation session (core/access.ts). */
const signIn = procedures.signIn;

const success = { success: true as const };

/** Answers before any lookup or SMTP work (service.requestCode): every address alike. */
const requestPasswordReset = signIn.input(schema.emailInput).mutation(({ ctx, input }) => {
  service.requestCode(ctx.app, ctx.req, input.email, "forget-password");
  return success;
});

export const emailOtpRouter = router({
  sendVerificationOtp: signIn.input(schema.sendInput).mutation(({ ctx, input }) => {
    service.requestCode(ctx.app, ctx.req, input.email, input.type);
    return success;
  }),

  checkVerificationOtp: procedures.public.input(schema.checkInput).mutation(async ({ ctx, input }) => {
    await service.checkCode(ctx.app, ctx.em, input.email, input.type, input.otp);
    return success;
  }),

  /** better-auth's answer without `autoSignInAfterVerification`: no new session; the caller's own cookie again when it is this user's. */
  verifyEmail: procedures.public.input(schema.verifyEmailInput).mutation(async ({ ctx, input }) => {
    const user = await service.verifyEmailWithCode(ctx.app, ctx.em, input.email, input.otp);
    const auth = await ctx.getSession();
    if (auth?.user.id === user.id) resendSessionCookie(ctx, auth);
    return { status: true as const, token: null, user: publicUser(user) };
  }),

  requestPasswordReset,

  resetPassword: signIn.input(schema.resetPasswordInput).mutation(async ({ ctx, input }) => {
    await service.resetPasswordWithCode(ctx.app, ctx.em, ctx.req, input);
    return success;
  }),
});

/** POST /sign-in/email-otp: `{ token, user }` and the session, or better-auth's `{ twoFactorRedirect, twoFactorMethods }`. */
/** Refusals audited here; a sign-in records `email-otp-sign-in` in its own transaction (core/address-sign-in.ts). */
export const signInEmailOtp = signIn.input(schema.signInInput).use(signInAudit("email-otp", { successes: false })).mutation(async ({ ctx, input }) => {
  const result = await service.signInWithCode(ctx.app, ctx.em, ctx.req, input, ctx.readCookie(TRUST_COOKIE));
  handOverSecondStep(ctx, result.secondStep);
  if (result.secondStep?.kind === "pending") return { twoFactorRedirect: true as const, twoFactorMethods: result.secondStep.methods };
  handOverSession(ctx, result);
  return { token: result.token, user: publicUser(result.user) };
});

/** POST /forget-password/email-otp: better-auth's older name of /email-otp/request-password-reset. */
export const forgetPasswordRouter = router({ emailOtp: requestPasswordReset });
