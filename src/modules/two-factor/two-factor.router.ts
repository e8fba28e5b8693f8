import { z } from "zod";
import type { Context } from "../../trpc/context.ts";
import { moduleProcedures, router } from "../../trpc/init.ts";
import { formBoolean, password } from "../../trpc/schema.ts";
import { handOverSession } from "../../trpc/effects.ts";
import { publicUser } from "../../core/index.ts";
import { PENDING_COOKIE, TRUST_COOKIE, TRUST_TTL_SEC } from "../../trpc/second-step.ts";
import * as enrollment from "./enrollment.service.ts";
import * as verification from "./verification.service.ts";
import { signInAudit } from "../../trpc/sign-in-audit.ts";

const procedures = moduleProcedures("twoFactor", (config) => config.twoFactor.enabled);

const passwordInput = z.object({ password });
const enableInput = z.object({ password, issuer: z.string().max(128).optional() });
const codeInput = z.object({ code: z.string().max(64), trustDevice: formBoolean.optional() });
const backupCodeInput = codeInput.extend({ disableSession: formBoolean.optional() });
const sendOtpInput = z.object({ trustDevice: formBoolean.optional() }).optional();

/** Which context a verification runs in: the caller's session wins over a pending cookie (better-auth). */
async function subjectOf(ctx: Context, trustDevice: boolean | undefined): Promise<verification.Subject> {
  const auth = await ctx.getSession();
  if (auth && ctx.sessionToken) return { kind: "session", auth, token: ctx.sessionToken };
  return { kind: "sign-in", pendingToken: ctx.readCookie(PENDING_COOKIE), trustDevice: trustDevice === true };
}

/** `{ token, user }`, and for a completed sign-in its cookies: session, no more pending, maybe trust. */
function answer(ctx: Context, verified: verification.Verified) {
  if (verified.issued) {
    handOverSession(ctx, verified.issued);
    ctx.effects.cookies ??= [];
    ctx.effects.cookies.push({ name: PENDING_COOKIE, value: "", maxAgeSec: 0 });
    if (verified.trustToken) ctx.effects.cookies.push({ name: TRUST_COOKIE, value: verified.trustToken, maxAgeSec: TRUST_TTL_SEC });
  }
  return { token: verified.token, user: publicUser(verified.user) };
}

/** A code that finishes a pending sign-in is a sign-in (audited); one checked for a signed-in user is not. */
const secondStepAudit = signInAudit("two-factor", { applies: (ctx) => ctx.sessionToken === null });

export const twoFactorRouter = router({
  enable: procedures.stepUp.input(enableInput).mutation(({ ctx, input }) =>
    enrollment.enable(ctx.app, ctx.em, ctx.auth.user, ctx.stepUp, input.password, input.issuer)),

  disable: procedures.stepUp.input(passwordInput).mutation(async ({ ctx, input }) => {
    await enrollment.disable(ctx.app, ctx.em, ctx.auth.user, ctx.stepUp, input.password);
    (ctx.effects.cookies ??= []).push({ name: TRUST_COOKIE, value: "", maxAgeSec: 0 });
    return { status: true as const };
  }),

  // The URI carries the secret: reading it is lasting access, like enabling.
  getTotpUri: procedures.stepUp.input(passwordInput).mutation(({ ctx, input }) =>
    enrollment.getTotpUri(ctx.app, ctx.em, ctx.auth.user, ctx.stepUp, input.password)),

  generateBackupCodes: procedures.stepUp.input(passwordInput).mutation(({ ctx, input }) =>
    enrollment.generateBackupCodes(ctx.app, ctx.em, ctx.auth.user, ctx.stepUp, input.password)),

  verifyTotp: procedures.public.input(codeInput).use(secondStepAudit).mutation(async ({ ctx, input }) => {
    const subject = await subjectOf(ctx, input.trustDevice);
    return answer(ctx, await verification.verifyTotp(ctx.app, ctx.em, ctx.req, subject, input.code));
  }),

  sendOtp: procedures.public.input(sendOtpInput).mutation(async ({ ctx }) => {
    await verification.sendOtp(ctx.app, ctx.em, ctx.req, await subjectOf(ctx, false));
    return { status: true as const };
  }),

  verifyOtp: procedures.public.input(codeInput).use(secondStepAudit).mutation(async ({ ctx, input }) => {
    const subject = await subjectOf(ctx, input.trustDevice);
    return answer(ctx, await verification.verifyOtp(ctx.app, ctx.em, ctx.req, subject, input.code));
  }),

  verifyBackupCode: procedures.public.input(backupCodeInput).use(secondStepAudit).mutation(async ({ ctx, input }) => {
    const subject = await subjectOf(ctx, input.trustDevice);
    return answer(ctx, await verification.verifyBackupCode(ctx.app, ctx.em, ctx.req, subject, input.code));
  }),
});
