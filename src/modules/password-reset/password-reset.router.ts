import { AuthError } from "../../errors.ts";
import { callbackWith } from "../../mail/links.ts";
import { publicProcedure } from "../../trpc/init.ts";
import * as schema from "./password-reset.schema.ts";
import * as service from "./password-reset.service.ts";

export const passwordResetProcedures = {
  requestPasswordReset: publicProcedure.input(schema.requestPasswordResetInput).mutation(({ ctx, input }) => {
    service.requestPasswordReset(ctx.app, ctx.req, input.email, input.redirectTo);
    return { status: true as const, message: service.RESET_REQUESTED_MESSAGE };
  }),

  /**
   * The mailed link: 302 to `callbackURL?token=…` (the app's new-password form) or
   * `callbackURL?error=INVALID_TOKEN`; tRPC callers read `url`. Without a callbackURL it only
   * answers whether the token is good. Does not use the token up.
   */
  resetPasswordCallback: publicProcedure.input(schema.resetPasswordCallbackInput).query(async ({ ctx, input }): Promise<{ status: boolean; url?: string }> => {
    const live = await service.isResetTokenLive(ctx.app, ctx.em, input.token);
    if (!input.callbackURL) {
      if (!live) throw new AuthError("INVALID_TOKEN");
      return { status: true };
    }
    const url = callbackWith(ctx.app, input.callbackURL, live ? { token: input.token } : { error: "INVALID_TOKEN" });
    ctx.effects.redirect = url;
    return { status: live, url };
  }),

  resetPassword: publicProcedure.input(schema.resetPasswordInput).mutation(async ({ ctx, input }) => {
    await service.resetPassword(ctx.app, ctx.em, input.token, input.newPassword);
    return { status: true as const };
  }),
};
