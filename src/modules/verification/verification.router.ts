import { AuthError } from "../../errors.ts";
import { callbackWith } from "../../mail/links.ts";
import { assertSafeCallback } from "../../security/origins.ts";
import { publicProcedure } from "../../trpc/init.ts";
import * as service from "./email-verification.service.ts";
import * as schema from "./verification.schema.ts";

export const verificationProcedures = {
  // Answers before any lookup or SMTP work (service.requestVerificationEmail): no enumeration.
  sendVerificationEmail: publicProcedure.input(schema.sendVerificationEmailInput).mutation(({ ctx, input }) => {
    assertSafeCallback(ctx.app, input.callbackURL);
    service.requestVerificationEmail(ctx.app, ctx.req.requestId, input.email, input.callbackURL);
    return { status: true as const };
  }),

  /**
   * The mailed link. With a callbackURL the bridge answers 302 (`?error=INVALID_TOKEN` on a bad
   * token) and tRPC callers read `url`; without one, `{ status: true }` or 400 INVALID_TOKEN.
   * A mutation: it uses the token up, even though the link arrives as a GET.
   */
  verifyEmail: publicProcedure.input(schema.verifyEmailInput).mutation(async ({ ctx, input }): Promise<{ status: boolean; url?: string }> => {
    assertSafeCallback(ctx.app, input.callbackURL);
    try {
      await service.verifyEmail(ctx.app, ctx.em, input.token);
    } catch (err) {
      if (!input.callbackURL || !(err instanceof AuthError) || err.authCode !== "INVALID_TOKEN") throw err;
      const url = callbackWith(ctx.app, input.callbackURL, { error: "INVALID_TOKEN" });
      ctx.effects.redirect = url;
      return { status: false, url };
    }
    if (!input.callbackURL) return { status: true };
    const url = callbackWith(ctx.app, input.callbackURL, {});
    ctx.effects.redirect = url;
    return { status: true, url };
  }),
};
