import { initTRPC } from "@trpc/server";
import { assertLastingAccess, assertNotKeyPrincipal, assertPermission, isFresh, verifyCurrentPassword, type Action, type ResolvedSession, type Resource, type StepUp } from "../core/index.ts";
import type { ResolvedConfig } from "../config/index.ts";
import { AuthError } from "../errors.ts";
import { assertSafeCallback } from "../security/origins.ts";
import type { Context } from "./context.ts";
import { toAuthError } from "./errors.ts";

export { toAuthError } from "./errors.ts";

/**
 * Who may call a procedure, on its definition (docs/architecture.md "One guard per rule"): the
 * builders below set it, rest-bridge/routes.ts and docs/http-api.md show it per route.
 * - public: anyone; session: any valid session (an impersonation too);
 * - sign-in: anyone, but a session the request carries must hold lasting access (a passwordless
 *   sign-in would outlive an impersonation, docs/wire-contract.md §6);
 * - lasting: the user's own session, never one that may not create lasting access (core/access.ts);
 * - step-up: lasting, and the procedure gets `ctx.stepUp` (freshness, the password re-check);
 * - fresh: lasting and signed in within `session.freshAgeSec` (403 SESSION_NOT_FRESH);
 * - permission: a session whose roles grant `permission` (admin).
 * `feature`: the config switch of a family; off, every procedure of it answers 404.
 */
export interface ProcedureMeta {
  access: "public" | "sign-in" | "session" | "account" | "lasting" | "step-up" | "fresh" | "permission";
  /** `resource:action,...` of a permission procedure. */
  permission?: string;
  /** A permission procedure that also needs the holder's own session (lasting). */
  lasting?: boolean;
  /** A permission procedure an API key's principal may not call (core/access.ts keyPrincipalRefusal). */
  account?: boolean;
  feature?: string;
}

const t = initTRPC
  .context<Context>()
  .meta<ProcedureMeta>()
  .create({
    isDev: false,
    // Shapes tRPC's HTTP answer; the adapter takes its status from data.httpStatus. The HTTP
    // layer (rest-bridge/server.ts) logs unexpected failures once, with the request id.
    errorFormatter({ shape, error, ctx }) {
      const auth = toAuthError(error);
      const internal = auth.status >= 500;
      return {
        ...shape,
        message: internal ? "Unexpected failure" : auth.message,
        data: {
          code: shape.data.code,
          httpStatus: auth.status,
          path: shape.data.path,
          authCode: auth.wireCode,
          ...(auth.issues ? { issues: auth.issues } : {}),
          ...(internal && ctx ? { requestId: ctx.req.requestId } : {}),
        },
      };
    },
  });

export const router = t.router;
export const createCallerFactory = t.createCallerFactory;
export const middleware = t.middleware;

/*
 * The middlewares, each one rule, each written once; every builder below is a chain of them.
 * No error-mapping middleware (each costs ~5 µs a call): AuthError is a TRPCError with the
 * contract's status already, and toAuthError maps the rest at the edges.
 */

/**
 * A call answers only once the session-cache evictions it made have left this instance
 * (core/session/invalidation.ts: the NOTIFY is committed), so no other instance is told
 * "revoked" later than the caller is. Settled at once when nothing was published.
 */
const settled = middleware(async ({ ctx, path, type, next }) => {
  // Tracing on (src/tracing): the procedure's span, its database spans as children; off, one property check.
  const tracing = ctx.app.tracing;
  const result = tracing ? await tracing.procedure(path, type, next, () => ctx.req.signInAttempt?.userId ?? ctx.userId) : await next();
  await ctx.app.invalidation.settled();
  return result;
});

/**
 * A body's `oauth_query` (core/registry.ts SignInContinuation), in every builder after its access
 * checks (so /oauth2/consent without a session is still 401): a forged one is refused before the
 * procedure runs; a call that handed over a fresh session (a sign-in by any way in, or its second
 * step) answers where the authorize request goes next.
 */
const continuation = middleware(async ({ ctx, getRawInput, next }) => {
  const hook = ctx.app.registry.signInContinuation;
  if (!hook) return next();
  const raw = await getRawInput();
  const query = raw !== null && typeof raw === "object" ? (raw as { oauth_query?: unknown }).oauth_query : undefined;
  if (typeof query !== "string" || !hook.check(ctx.app, query)) return next();
  const result = await next();
  const token = ctx.effects.authToken;
  if (!result.ok || !token) return result;
  return { ...result, data: await hook.continue(ctx.app, ctx.em, token, query) };
});

/**
 * A valid session, handed to the procedure as `ctx.auth`; else 401 UNAUTHORIZED.
 * Set on the request's own context, not through tRPC's `next({ ctx })`: that copies the context
 * into a new object, and the copy reads every getter, so `em` forked an EntityManager for every
 * call with a session, used or not (most of a small procedure's cost, docs/performance.md).
 * Given no `ctx`, tRPC hands the same object on; the cast only tells the chain's types what
 * `auth` is. The value is the context's memoized session, the same on every call of it.
 */
const session = middleware(async ({ ctx, next }) => {
  const auth = await ctx.getSession();
  if (!auth) throw new AuthError("UNAUTHORIZED");
  (ctx as Context & { auth: ResolvedSession }).auth = auth;
  return next({ ctx: undefined as unknown as { auth: ResolvedSession } });
});

/** The session a middleware after `session` runs with (tRPC types the context by the chain, not by a standalone middleware). */
const authOf = (ctx: Context): ResolvedSession => (ctx as Context & { auth: ResolvedSession }).auth;

/** The rule of lasting access (core/access.ts): 403 before input parsing. */
const lasting = middleware(({ ctx, next }) => {
  assertLastingAccess(authOf(ctx));
  return next();
});

/** Not an API key's principal (core/access.ts): account security an impersonation may still do. 403 before input parsing. */
const notByKey = middleware(({ ctx, next }) => {
  assertNotKeyPrincipal(authOf(ctx));
  return next();
});

/** No session, or one that holds lasting access (core/access.ts): a sign-in must not start from a borrowed session. */
const noBorrowedSession = middleware(async ({ ctx, next }) => {
  const auth = await ctx.getSession();
  if (auth) assertLastingAccess(auth);
  return next();
});

const stepUp = middleware(({ ctx, next }) => {
  const auth = authOf(ctx);
  const caller = { userId: auth.user.id, ip: ctx.req.ip };
  const step: StepUp = {
    fresh: isFresh(ctx.app, auth),
    verifyPassword: (password, withoutPassword) => verifyCurrentPassword(ctx.app, ctx.em, caller, password, withoutPassword),
  };
  return next({ ctx: { stepUp: step } });
});

/** Signed in within `session.freshAgeSec` (better-auth's freshSessionMiddleware). */
const fresh = middleware(({ ctx, next }) => {
  if (!isFresh(ctx.app, authOf(ctx))) throw new AuthError("SESSION_NOT_FRESH");
  return next();
});

/** Every `callbackURL`, `errorCallbackURL`, `newUserCallbackURL` and `redirectTo` of the input (docs/wire-contract.md §3). */
const CALLBACK_KEY = /^(callbackURL|errorCallbackURL|newUserCallbackURL|redirectTo)$/;

/**
 * The open-redirect rule, once for every procedure: each callback field of the input must be a
 * relative path or a trusted origin (403 INVALID_CALLBACK_URL). It reads the raw input after the
 * access checks; a value that is not a string is left to the input schema.
 */
const callbacks = middleware(async ({ ctx, getRawInput, next }) => {
  const raw = await getRawInput();
  if (raw !== null && typeof raw === "object") {
    for (const [key, value] of Object.entries(raw)) if (CALLBACK_KEY.test(key) && typeof value === "string") assertSafeCallback(ctx.app, value);
  }
  return next();
});

/** A family's switch: off, every procedure answers 404 NOT_FOUND before anything else, as if the routes did not exist. */
function featureSwitch(isOn: (config: ResolvedConfig) => boolean) {
  return middleware(({ ctx, next }) => {
    if (!isOn(ctx.app.config)) throw new AuthError("NOT_FOUND");
    return next();
  });
}

/** Holds `actions` on `resource` (one role granting them all); else 403 with better-auth's code. Before input parsing. */
function permission<R extends Resource>(resource: R, actions: readonly Action<R>[]) {
  return middleware(({ ctx, next }) => {
    assertPermission(ctx.app.config.admin, authOf(ctx).user, resource, actions);
    return next();
  });
}

/** The builders of one base (the whole service, or a family behind its switch), from the same middleware values. */
function buildersOn(base: typeof t.procedure) {
  const authed = base.meta({ access: "session" }).use(session);
  const account = authed.meta({ access: "account" }).use(notByKey);
  const lastingAccess = authed.meta({ access: "lasting" }).use(lasting);
  const withStepUp = lastingAccess.meta({ access: "step-up" }).use(stepUp);
  return {
    public: base.meta({ access: "public" }).use(callbacks).use(continuation),
    signIn: base.meta({ access: "sign-in" }).use(noBorrowedSession).use(callbacks).use(continuation),
    authed: authed.use(callbacks).use(continuation),
    account: account.use(callbacks).use(continuation),
    lastingAccess: lastingAccess.use(callbacks).use(continuation),
    stepUp: withStepUp.use(callbacks).use(continuation),
    fresh: withStepUp.meta({ access: "fresh" }).use(fresh).use(callbacks).use(continuation),
    /**
     * `lasting`: the permission's holder must also hold lasting access (a credential reset of
     * someone else); `account`: not as an API key's principal (impersonation, API keys for others).
     */
    withPermission<R extends Resource>(resource: R, actions: readonly Action<R>[], opts: { lasting?: boolean; account?: boolean } = {}) {
      const meta: ProcedureMeta = {
        access: "permission",
        permission: `${resource}:${actions.join(",")}`,
        ...(opts.lasting ? { lasting: true } : {}),
        ...(opts.account ? { account: true } : {}),
      };
      const permitted = authed.meta(meta).use(permission(resource, actions));
      // The permission first (403 with better-auth's code to whoever lacks it), then the holder's own session.
      return (opts.lasting ? permitted.use(lasting) : opts.account ? permitted.use(notByKey) : permitted).use(callbacks).use(continuation);
    },
  };
}

const service = buildersOn(t.procedure.use(settled));

export const publicProcedure = service.public;
export const authedProcedure = service.authed;
export const accountProcedure = service.account;
export const lastingAccessProcedure = service.lastingAccess;
export const stepUpProcedure = service.stepUp;
export const freshProcedure = service.fresh;
export const withPermission = service.withPermission;

/**
 * The procedures of a module family switched on by its config section (docs/architecture.md):
 * the same builders behind the family's switch (`name` shows in procedure meta and the docs).
 */
export function moduleProcedures(name: string, isOn: (config: ResolvedConfig) => boolean) {
  return buildersOn(t.procedure.meta({ access: "public", feature: name }).use(featureSwitch(isOn)).use(settled));
}
