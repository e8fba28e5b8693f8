import { recordSignIn, type SignInMethod } from "../core/index.ts";
import type { Context } from "./context.ts";
import { toAuthError } from "./errors.ts";
import { middleware } from "./init.ts";

export interface SignInAuditOptions {
  /** false: the way in records its own success in its transaction (magic links, email codes); refusals are still recorded here. */
  successes?: boolean;
  /** Whether this call is a sign-in at all (a two-factor code checked for a signed-in user is not; a social start only redirects). */
  applies?: (ctx: Context, input: unknown) => boolean;
}

/** The provider a social sign-in names in its input. */
function providerOf(input: unknown): string | undefined {
  const provider = (input as { provider?: unknown } | undefined)?.provider;
  return typeof provider === "string" ? provider : undefined;
}

/**
 * The audit record of a sign-in call (core/sign-in-audit.ts), after its input parsed (a malformed
 * request is no attempt): a session handed over is a `sign-in`, a refusal (a 4xx thrown, or
 * answered as a redirect with `effects.failure`) a `sign-in-failed` with its code. The way in
 * names the user it tried on `ctx.req.signInAttempt` (password sign-in does), and the session's
 * user when it hands one over (trpc/effects.ts handOverSession).
 */
export function signInAudit(method: SignInMethod, options: SignInAuditOptions = {}) {
  return middleware(async ({ ctx, input, next }) => {
    if (options.applies && !options.applies(ctx, input)) return next();
    const attempt = { userId: null as string | null };
    ctx.req.signInAttempt = attempt;
    const result = await next();
    const base = { method, userId: attempt.userId, provider: providerOf(input) };
    if (!result.ok) {
      const auth = toAuthError(result.error);
      if (auth.status < 500) await recordSignIn(ctx.app, ctx.req, { ...base, reason: auth.authCode });
    } else if (ctx.effects.failure) {
      await recordSignIn(ctx.app, ctx.req, { ...base, reason: ctx.effects.failure });
    } else if (options.successes !== false && (ctx.effects.authToken || (ctx.effects.sessionCookie && "token" in ctx.effects.sessionCookie))) {
      await recordSignIn(ctx.app, ctx.req, base);
    }
    return result;
  });
}
