import { actionLink, callbackWith } from "../../mail/links.ts";
import { assertSafeCallback } from "../../security/origins.ts";
import type { Context } from "../../trpc/context.ts";
import { authedProcedure, publicProcedure } from "../../trpc/init.ts";
import * as accounts from "./accounts.service.ts";
import * as schema from "./oauth.schema.ts";
import * as service from "./oauth.service.ts";
import { getProvider } from "./runtime.ts";

/** `{ url, redirect }` plus `Location` (CONTRACT.md §5); the browser client follows it. */
function authorizationAnswer(ctx: Context, url: string, disableRedirect: boolean | undefined) {
  if (!disableRedirect) ctx.effects.headers.location = url;
  return { url, redirect: !disableRedirect };
}

export const oauthProcedures = {
  signInSocial: publicProcedure.input(schema.signInSocialInput).mutation(async ({ ctx, input }) => {
    for (const url of [input.callbackURL, input.errorCallbackURL, input.newUserCallbackURL]) assertSafeCallback(ctx.app, url);
    const url = await service.startAuthorization(ctx.app, ctx.em, input);
    return authorizationAnswer(ctx, url, input.disableRedirect);
  }),

  linkSocial: authedProcedure.input(schema.linkSocialInput).mutation(async ({ ctx, input }) => {
    for (const url of [input.callbackURL, input.errorCallbackURL]) assertSafeCallback(ctx.app, url);
    const url = await service.startAuthorization(ctx.app, ctx.em, { ...input, linkUserId: ctx.auth.user.id });
    return authorizationAnswer(ctx, url, input.disableRedirect);
  }),

  /**
   * The provider's redirect. A browser redirect: the session goes in the cookie only, no
   * `set-auth-token`. A mutation (it uses the state up), though it arrives as a GET.
   */
  callback: publicProcedure.input(schema.callbackInput).mutation(async ({ ctx, input }) => {
    let outcome: service.CallbackOutcome;
    try {
      outcome = await service.handleCallback(ctx.app, ctx.em, ctx.req, input);
    } catch (err) {
      if (!(err instanceof service.CallbackFailure)) throw err;
      if (!err.errorCallbackURL) throw err.error;
      const query: Record<string, string> = { error: err.error.authCode };
      if (err.providerError) query.provider_error = err.providerError;
      const url = callbackWith(ctx.app, err.errorCallbackURL, query);
      ctx.effects.redirect = url;
      return { redirect: true as const, url };
    }
    if (outcome.kind === "signed-in") {
      ctx.effects.sessionCookie = { token: outcome.session.token, maxAgeSec: outcome.session.cookieMaxAgeSec };
    }
    ctx.effects.redirect = outcome.redirectTo;
    return { redirect: true as const, url: outcome.redirectTo };
  }),

  /**
   * OAuth 2.0 Form Post Response Mode: the provider POSTs the response; answer 302 to the GET
   * form, which a SameSite=Lax cookie then accompanies.
   */
  callbackPost: publicProcedure.input(schema.callbackInput).mutation(({ ctx, input }) => {
    const provider = getProvider(ctx.app, input.provider);
    const { code, state, error, error_description, iss } = input;
    const url = actionLink(ctx.app, `/callback/${encodeURIComponent(provider.name)}`, { code, state, error, error_description, iss });
    ctx.effects.redirect = url;
    return { redirect: true as const, url };
  }),

  getAccessToken: authedProcedure
    .input(schema.accountRefInput)
    .mutation(({ ctx, input }) => accounts.getAccessToken(ctx.app, ctx.em, ctx.req.requestId, ctx.auth.user.id, input)),

  refreshToken: authedProcedure
    .input(schema.accountRefInput)
    .mutation(({ ctx, input }) => accounts.refreshAccountTokens(ctx.app, ctx.em, ctx.req.requestId, ctx.auth.user.id, input)),

  accountInfo: authedProcedure
    .input(schema.accountInfoInput)
    .query(({ ctx, input }) => accounts.accountInfo(ctx.app, ctx.em, ctx.req.requestId, ctx.auth.user.id, input.accountId)),

  listAccounts: authedProcedure.query(({ ctx }) => accounts.listAccounts(ctx.em, ctx.auth.user.id)),

  unlinkAccount: authedProcedure.input(schema.accountRefInput).mutation(async ({ ctx, input }) => {
    await accounts.unlinkAccount(ctx.app, ctx.em, ctx.auth.user.id, input);
    return { status: true as const };
  }),
};
