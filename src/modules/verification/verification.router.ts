import { AuthError } from "../../errors.ts";
import { callbackWith } from "../../mail/links.ts";
import { publicProcedure } from "../../trpc/init.ts";
import { publicUser, type PublicUser, purposeOf } from "../../core/index.ts";
import { resendSessionCookie } from "../../trpc/effects.ts";
import * as service from "./email-verification.service.ts";
import * as schema from "./verification.schema.ts";

export const verificationProcedures = {
  // Answers before any lookup or SMTP work (service.requestVerificationEmail): no enumeration.
  sendVerificationEmail: publicProcedure.input(schema.sendVerificationEmailInput).mutation(async ({ ctx, input }) => {
    const auth = await ctx.getSession();
    service.requestVerificationEmail(ctx.app, ctx.req, input.email, input.callbackURL, auth?.user);
    return { status: true as const };
  }),

  /**
   * The mailed link: email verification, or a step of change-email (docs/wire-contract.md §9). With a
   * callbackURL the bridge answers 302 (`?error=INVALID_TOKEN` on a bad token) and tRPC callers
   * read `url`; without one, `{ status: true, user }` (null for a verified address, the moved user
   * once a change of email is done; none for the approval step) or 400 INVALID_TOKEN. A mutation: it uses the token up, even though the link arrives as a GET.
   */
  verifyEmail: publicProcedure.input(schema.verifyEmailInput).mutation(async ({ ctx, input }): Promise<{ status: boolean; url?: string; user?: PublicUser | null }> => {
    // better-auth's answers: `user: null` for a verified address, the moved user for a change-email
    // proof, no `user` for its approval.
    let user: PublicUser | null | undefined;
    try {
      // A link of a kind a family registered (change-email's), or the verification link itself.
      const links = ctx.app.registry.emailLinks;
      const purpose = await purposeOf(ctx.em, input.token, links.map((l) => l.purpose));
      const link = links.find((l) => l.purpose === purpose);
      if (link) {
        const opened = await link.open(ctx.app, ctx.em, ctx.req, input.token, input.callbackURL);
        if (opened.user) user = publicUser(opened.user);
      } else {
        await service.verifyEmail(ctx.app, ctx.em, input.token);
        user = null;
      }
    } catch (err) {
      if (!input.callbackURL || !(err instanceof AuthError) || err.authCode !== "INVALID_TOKEN") throw err;
      const url = callbackWith(ctx.app, input.callbackURL, { error: "INVALID_TOKEN" });
      ctx.effects.redirect = url;
      return { status: false, url };
    }
    if (user) {
      // The moved user's own session, if the link was opened in it: its cookie again (better-auth).
      const auth = await ctx.getSession();
      if (auth?.user.id === user.id) resendSessionCookie(ctx, auth);
    }
    if (!input.callbackURL) return { status: true, ...(user !== undefined ? { user } : {}) };
    const url = callbackWith(ctx.app, input.callbackURL, {});
    ctx.effects.redirect = url;
    return { status: true, url };
  }),
};
