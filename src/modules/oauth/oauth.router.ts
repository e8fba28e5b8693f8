import { actionLink, callbackWith } from "../../mail/links.ts";
import type { Context } from "../../trpc/context.ts";
import { authedProcedure, lastingAccessProcedure, publicProcedure } from "../../trpc/init.ts";
import { handOverSession } from "../../trpc/effects.ts";
import { handOverSecondStep } from "../../trpc/second-step.ts";
import { listAccounts, publicUser, userRow } from "../../core/index.ts";
import * as accounts from "./accounts.service.ts";
import { renderErrorPage } from "./error-page.ts";
import { linkWithIdToken, signInWithIdToken } from "./id-token.service.ts";
import * as schema from "./oauth.schema.ts";
import * as service from "./oauth.service.ts";
import { getProvider } from "./runtime.ts";
import { STATE_COOKIE, STATE_COOKIE_MAX_AGE_SEC } from "./state.ts";
import { signInAudit } from "../../trpc/sign-in-audit.ts";

/**
 * `{ url, redirect }` plus `Location` (docs/wire-contract.md §5); the browser client follows it. The state
 * cookie goes with it in every case: a `disableRedirect` caller opens the URL in the same browser.
 */
function authorizationAnswer(ctx: Context, { url, stateCookie }: service.Authorization, disableRedirect: boolean | undefined) {
  setStateCookie(ctx, stateCookie, STATE_COOKIE_MAX_AGE_SEC);
  if (!disableRedirect) ctx.effects.headers.location = url;
  return { url, redirect: !disableRedirect };
}

/** Lives as long as the state (10 min); HttpOnly, SameSite=Lax, `__Secure-` on https (Effects.cookies). */
function setStateCookie(ctx: Context, value: string, maxAgeSec: number) {
  ctx.effects.cookies = [...(ctx.effects.cookies ?? []).filter((c) => c.name !== STATE_COOKIE), { name: STATE_COOKIE, value, maxAgeSec }];
}

/**
 * better-auth's ID-token answer: `{ redirect: false, token, url: undefined, user }` (so no `url`
 * on the wire), with the session cookie and `set-auth-token` (a native app reads the header).
 */
function idTokenAnswer(ctx: Context, { session, user }: Awaited<ReturnType<typeof signInWithIdToken>>) {
  handOverSecondStep(ctx, session.secondStep);
  if (session.secondStep?.kind === "pending") return { twoFactorRedirect: true as const, twoFactorMethods: session.secondStep.methods };
  handOverSession(ctx, session);
  return { redirect: false as const, token: session.token, user: publicUser(userRow(user)) };
}

/** An ID-token sign-in is a sign-in (audited); a redirect start is not, its callback is. */
const idTokenAudit = signInAudit("id-token", { applies: (_ctx, input) => Boolean((input as { idToken?: unknown }).idToken) });

export const oauthProcedures = {
  signInSocial: publicProcedure.input(schema.signInSocialInput).use(idTokenAudit).mutation(async ({ ctx, input }) => {
    if (input.idToken) return idTokenAnswer(ctx, await signInWithIdToken(ctx.app, ctx.em, ctx.req, { provider: input.provider, idToken: input.idToken }));
    const oauthQuery = service.continuationOf(ctx.app, input.oauth_query);
    const authorization = await service.startAuthorization(ctx.app, ctx.em, { ...input, oauthQuery });
    return authorizationAnswer(ctx, authorization, input.disableRedirect);
  }),

  /** With `idToken`, better-auth's direct link and its answer `{ url: "", status: true, redirect: false }`. */
  linkSocial: lastingAccessProcedure.input(schema.linkSocialInput).mutation(async ({ ctx, input }) => {
    if (input.idToken) {
      await linkWithIdToken(ctx.app, ctx.em, ctx.req, ctx.auth.user.id, { provider: input.provider, idToken: input.idToken });
      return { url: "", status: true as const, redirect: false as const };
    }
    const authorization = await service.startAuthorization(ctx.app, ctx.em, { ...input, linkUserId: ctx.auth.user.id });
    return authorizationAnswer(ctx, authorization, input.disableRedirect);
  }),

  /**
   * The provider's redirect. A browser redirect: the session goes in the cookie only, no
   * `set-auth-token`. A mutation (it uses the state up), though it arrives as a GET. The state
   * cookie is cleared once it has served (service.settlesStateCookie), with a failure too (the
   * bridge and tRPC send a failed call's cookies). A sign-in started with `oauth_query` goes on
   * with that authorize request, as the continuation middleware does for the other sign-ins.
   */
  callback: publicProcedure.input(schema.callbackInput).use(signInAudit("social")).mutation(async ({ ctx, input }) => {
    const stateCookie = ctx.readCookie(STATE_COOKIE);
    if (service.settlesStateCookie(ctx.app, { ...input, stateCookie })) setStateCookie(ctx, "", 0);
    let outcome: service.CallbackOutcome;
    try {
      outcome = await service.handleCallback(ctx.app, ctx.em, ctx.req, { ...input, stateCookie });
    } catch (err) {
      if (!(err instanceof service.CallbackFailure)) throw err;
      if (!err.errorCallbackURL) throw err.error;
      const query: Record<string, string> = { error: err.error.wireCode };
      if (err.providerError) query.provider_error = err.providerError;
      const url = callbackWith(ctx.app, err.errorCallbackURL, query);
      ctx.effects.redirect = url;
      ctx.effects.failure = err.error.authCode; // the metrics' and the audit's outcome
      return { redirect: true as const, url };
    }
    let url = outcome.redirectTo;
    if (outcome.kind === "signed-in") {
      handOverSecondStep(ctx, outcome.session.secondStep);
      const { token, cookieMaxAgeSec } = outcome.session;
      if (token) ctx.effects.sessionCookie = { token, maxAgeSec: cookieMaxAgeSec };
      if (token && ctx.req.signInAttempt) ctx.req.signInAttempt.userId = outcome.session.userId;
      const hook = ctx.app.registry.signInContinuation;
      if (token && outcome.continueWith && hook) url = (await hook.continue(ctx.app, ctx.em, token, outcome.continueWith)).url;
    }
    ctx.effects.redirect = url;
    return { redirect: true as const, url };
  }),

  /**
   * OAuth 2.0 Form Post Response Mode: the provider POSTs the response; answer 302 to the GET
   * form, which a SameSite=Lax cookie then accompanies. The cross-site POST itself carries no Lax
   * cookie, so the state cookie is checked on the GET, never here.
   */
  callbackPost: publicProcedure.input(schema.callbackInput).mutation(({ ctx, input }) => {
    const provider = getProvider(ctx.app, input.provider);
    const { code, state, error, error_description, iss } = input;
    const url = actionLink(ctx.app, `/callback/${encodeURIComponent(provider.name)}`, { code, state, error, error_description, iss });
    ctx.effects.redirect = url;
    return { redirect: true as const, url };
  }),

  // Provider tokens are lasting access (docs/wire-contract.md §6): a refresh token outlives an impersonation.
  getAccessToken: lastingAccessProcedure
    .input(schema.accountRefInput)
    .mutation(({ ctx, input }) => accounts.getAccessToken(ctx.app, ctx.em, ctx.req.requestId, ctx.auth.user.id, input)),

  refreshToken: lastingAccessProcedure
    .input(schema.accountRefInput)
    .mutation(({ ctx, input }) => accounts.refreshAccountTokens(ctx.app, ctx.em, ctx.req.requestId, ctx.auth.user.id, input)),

  accountInfo: authedProcedure
    .input(schema.accountInfoInput)
    .query(({ ctx, input }) => accounts.accountInfo(ctx.app, ctx.em, ctx.req.requestId, ctx.auth.user.id, input ?? {})),

  listAccounts: authedProcedure.query(({ ctx }) => listAccounts(ctx.em, ctx.auth.user.id)),

  /** The HTML page failed browser callbacks land on (the bridge writes the string as text/html). */
  errorPage: publicProcedure.input(schema.errorPageInput).query(({ input }) => renderErrorPage(input.error)),

  unlinkAccount: lastingAccessProcedure.input(schema.accountRefInput).mutation(async ({ ctx, input }) => {
    await accounts.unlinkAccount(ctx.app, ctx.em, ctx.auth.user.id, input);
    return { status: true as const };
  }),
};
