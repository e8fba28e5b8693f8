import { AuthError } from "../../errors.ts";
import { prefersHtml } from "../../http/accept.ts";
import { callbackWith } from "../../mail/links.ts";
import { publicSession, publicUser } from "../../core/index.ts";
import type { Context } from "../../trpc/context.ts";
import { handOverSession } from "../../trpc/effects.ts";
import { moduleProcedures, router } from "../../trpc/init.ts";
import { handOverSecondStep, TRUST_COOKIE } from "../../trpc/second-step.ts";
import { renderConfirmPage } from "./magic-link.page.ts";
import * as schema from "./magic-link.schema.ts";
import * as service from "./magic-link.service.ts";
import { signInAudit } from "../../trpc/sign-in-audit.ts";

/** better-auth's magic-link plugin endpoints (rest-bridge/routes.ts, `// magic-link`); 404 when `magicLink.enabled` is false. */
const procedures = moduleProcedures("magicLink", (config) => config.magicLink.enabled);

/** Asking for a link, or using one, is refused from an impersonation session (core/access.ts). */
const signIn = procedures.signIn;
/** Refusals audited here; a sign-in records `magic-link-sign-in` in its own transaction (core/address-sign-in.ts). */
const linkAudit = signInAudit("magic-link", { successes: false });

type VerifyInput = { token: string; callbackURL?: string | undefined; newUserCallbackURL?: string | undefined; errorCallbackURL?: string | undefined };

/** better-auth's `?error=` values where they differ from our codes. */
const REDIRECT_CODE: Partial<Record<string, string>> = { NEW_USER_SIGNUP_DISABLED: "new_user_signup_disabled" };

function redirect(ctx: Context, url: string) {
  ctx.effects.redirect = url;
  return { redirect: true as const, url };
}

/**
 * A failed link: to `errorCallbackURL` (else `callbackURL`) with `?error=CODE`, better-auth's
 * rule; with neither, the error itself: JSON for a program, the /error page for a browser
 * (the route's errorPage), where better-auth redirects to its own "/".
 */
function failed(ctx: Context, input: VerifyInput, err: unknown) {
  const target = input.errorCallbackURL || input.callbackURL;
  if (!target || !(err instanceof AuthError) || err.status >= 500) throw err;
  ctx.effects.failure = err.authCode;
  return redirect(ctx, callbackWith(ctx.app, target, { error: REDIRECT_CODE[err.authCode] ?? err.wireCode }));
}

type VerifyAnswer = Awaited<ReturnType<typeof verify>>;

/** Uses the link up: the session (JSON, or a 302 to the callback with the cookie), or the pending second step. */
async function verify(ctx: Context, input: VerifyInput) {
  let result: Awaited<ReturnType<typeof service.verifyMagicLink>>;
  try {
    result = await service.verifyMagicLink(ctx.app, ctx.em, ctx.req, input.token, ctx.readCookie(TRUST_COOKIE));
  } catch (err) {
    return failed(ctx, input, err);
  }
  handOverSecondStep(ctx, result.secondStep);
  if (result.secondStep?.kind === "pending") {
    const { methods } = result.secondStep;
    // As a social sign-in held for its second factor: the app's page asks for it.
    if (input.callbackURL) return redirect(ctx, callbackWith(ctx.app, input.callbackURL, { twoFactorRedirect: "true" }));
    return { twoFactorRedirect: true as const, twoFactorMethods: methods };
  }
  handOverSession(ctx, result);
  if (input.callbackURL) {
    const target = result.isNewUser && input.newUserCallbackURL ? input.newUserCallbackURL : input.callbackURL;
    return redirect(ctx, callbackWith(ctx.app, target, {}));
  }
  const token = result.token!;
  return { token, user: publicUser(result.user), session: { ...publicSession(result.session!), token } };
}

/** The origins the confirm form may post to or be redirected to (its callbacks, checked by the builder; relative ones are ours). */
function formOrigins(ctx: Context, input: VerifyInput): string[] {
  const urls = [input.callbackURL, input.newUserCallbackURL, input.errorCallbackURL].filter((u): u is string => Boolean(u));
  return [ctx.app.origin, ...urls.map((u) => new URL(u, ctx.app.config.publicUrl).origin)];
}

/** A browser opened the link: the confirm page (the link stays unused until its button is pressed), or where a dead link goes. */
async function confirmPage(ctx: Context, input: VerifyInput) {
  const email = await service.liveLinkAddress(ctx.app, ctx.em, input.token);
  if (!email) return failed(ctx, input, new AuthError("INVALID_TOKEN"));
  const { token, callbackURL, newUserCallbackURL, errorCallbackURL } = input;
  const html = renderConfirmPage({ action: `${ctx.app.config.basePath}/magic-link/verify`, email, fields: { token, callbackURL, newUserCallbackURL, errorCallbackURL } });
  ctx.effects.page = { html, formAction: formOrigins(ctx, input) };
  return { confirm: true as const };
}

export const magicLinkRouter = router({
  /**
   * GET /magic-link/verify, the mailed link: the client SDK (JSON) signs in; a browser navigation
   * (Accept prefers text/html) gets the confirm page unless `magicLink.confirmPage` is false.
   * A mutation: it may use the link up, though it arrives as a GET.
   */
  verify: signIn.input(schema.verifyInput).use(linkAudit).mutation(async ({ ctx, input }): Promise<VerifyAnswer | { confirm: true }> => {
    if (ctx.app.config.magicLink.confirmPage && prefersHtml(ctx.req.accept ?? undefined)) return confirmPage(ctx, input);
    return verify(ctx, input);
  }),

  /** POST /magic-link/verify: the confirm page's button (a form post; JSON too). */
  confirm: signIn.input(schema.verifyInput).use(linkAudit).mutation(({ ctx, input }) => verify(ctx, input)),
});

/** POST /sign-in/magic-link: `{ status: true }` for every address, before any lookup (service.requestMagicLink). */
export const signInMagicLink = signIn.input(schema.sendInput).mutation(({ ctx, input }) => {
  service.requestMagicLink(ctx.app, ctx.req, input);
  return { status: true as const };
});
