import type { Context } from "../../trpc/context.ts";
import { handOverSession } from "../../trpc/effects.ts";
import { publicProcedure, router } from "../../trpc/init.ts";
import { publicUser, type SignedIn } from "../../core/index.ts";
import * as schema from "./email-password.schema.ts";
import * as service from "./email-password.service.ts";
import { handOverSecondStep, TRUST_COOKIE } from "../../trpc/second-step.ts";
import { signInAudit } from "../../trpc/sign-in-audit.ts";


export const signUpRouter = router({
  email: publicProcedure.input(schema.signUpEmailInput).mutation(async ({ ctx, input }) => {
    const result = await service.signUp(ctx.app, ctx.req, input);
    handOverSession(ctx, result);
    return { token: result.token, user: publicUser(result.user) };
  }),
});

/** A password sign-in's answer: the session, or better-auth's `{ twoFactorRedirect, twoFactorMethods }`. */
function signedIn(ctx: Context, result: SignedIn, callbackURL: string | undefined) {
  handOverSecondStep(ctx, result.secondStep);
  if (result.secondStep?.kind === "pending") return { twoFactorRedirect: true as const, twoFactorMethods: result.secondStep.methods };
  handOverSession(ctx, result);
  return signedInBody(result, callbackURL);
}

function signedInBody(result: SignedIn, callbackURL: string | undefined) {
  return {
    redirect: Boolean(callbackURL),
    token: result.token,
    url: callbackURL ?? null,
    user: publicUser(result.user),
  };
}

export const signInRouter = router({
  email: publicProcedure.input(schema.signInEmailInput).use(signInAudit("email")).mutation(async ({ ctx, input }) => {
    const result = await service.signInEmail(ctx.app, () => ctx.em, ctx.req, { ...input, trustCookie: ctx.readCookie(TRUST_COOKIE) });
    return signedIn(ctx, result, input.callbackURL);
  }),
  username: publicProcedure.input(schema.signInUsernameInput).use(signInAudit("username")).mutation(async ({ ctx, input }) => {
    const result = await service.signInUsername(ctx.app, () => ctx.em, ctx.req, { ...input, trustCookie: ctx.readCookie(TRUST_COOKIE) });
    return signedIn(ctx, result, input.callbackURL);
  }),
});

export const isUsernameAvailable = publicProcedure
  .input(schema.usernameInput)
  .mutation(async ({ ctx, input }) => ({ available: await service.isUsernameAvailable(ctx.em, input.username) }));
