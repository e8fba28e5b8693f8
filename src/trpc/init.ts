import { DriverException } from "../db/mikro-orm.ts";
import { initTRPC, TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import { AuthError } from "../errors.ts";
import { assertPermission, type Action, type Resource } from "../core/permissions.ts";
import type { Context } from "./context.ts";

/**
 * Maps any error a procedure can raise onto the contract: AuthError as is, zod input errors as
 * VALIDATION_ERROR naming each field, anything else as a 500 whose cause stays in the log.
 */
export function toAuthError(err: unknown): AuthError {
  if (err instanceof AuthError) return err;
  if (err instanceof TRPCError) {
    if (err.cause instanceof AuthError) return err.cause;
    // tRPC's adapter reads the body lazily: a malformed JSON body surfaces as BAD_REQUEST caused by a SyntaxError.
    if (err.code === "PARSE_ERROR" || (err.code === "BAD_REQUEST" && err.cause instanceof SyntaxError)) {
      return new AuthError("INVALID_JSON", { cause: err });
    }
    if (err.cause instanceof ZodError || err.code === "BAD_REQUEST") {
      const issues =
        err.cause instanceof ZodError
          ? err.cause.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }))
          : [];
      const message = issues.length
        ? `Invalid ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`
        : "Invalid request";
      return new AuthError("VALIDATION_ERROR", { message, issues, cause: err });
    }
    if (err.code === "NOT_FOUND") return new AuthError("NOT_FOUND", { cause: err });
    if (err.code === "PAYLOAD_TOO_LARGE") return new AuthError("PAYLOAD_TOO_LARGE", { cause: err });
    if (err.code === "UNSUPPORTED_MEDIA_TYPE") return new AuthError("UNSUPPORTED_MEDIA_TYPE", { cause: err });
    if (err.code === "METHOD_NOT_SUPPORTED") return new AuthError("NOT_FOUND", { cause: err });
  }
  if (rejectsNul(err)) return new AuthError("VALIDATION_ERROR", { message: "Invalid request: text cannot contain NUL (U+0000) characters", cause: err });
  return new AuthError("INTERNAL_SERVER_ERROR", { cause: err });
}

/**
 * A U+0000 in a string field, wherever it ends up in a statement: PostgreSQL refuses it in a bound
 * parameter (22021) and in jsonb (22P05); where MikroORM inlines the value into the SQL text,
 * PostgreSQL answers "invalid message format" and SQLite "unrecognized token" (the SQL text ends
 * at the NUL, inside the quoted value: always an error, never other SQL). The statement fails
 * whole, inside its transaction: the caller's bad input, not a 500.
 */
function rejectsNul(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === "22021" || code === "22P05") return true;
    if (e instanceof DriverException && e.message.includes("\u0000")) return true;
  }
  return false;
}

const t = initTRPC.context<Context>().create({
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

/**
 * No error-mapping middleware (each costs ~5 µs a call): AuthError is a TRPCError with the
 * contract's status already, and toAuthError maps the rest at the edges. The one middleware:
 * a call answers only once the session-cache evictions it made have left this instance
 * (session/invalidation.ts: the NOTIFY is committed), so no other instance is told "revoked"
 * later than the caller is. Settled at once when nothing was published.
 */
export const publicProcedure = t.procedure.use(async ({ ctx, next }) => {
  const result = await next();
  await ctx.app.invalidation.settled();
  return result;
});

/** Needs a valid session; hands it to the procedure as `ctx.auth`. */
export const authedProcedure = publicProcedure.use(async ({ ctx, next }) => {
  const auth = await ctx.getSession();
  if (!auth) throw new AuthError("UNAUTHORIZED");
  return next({ ctx: { auth } });
});

/**
 * Needs the user's own session, not an impersonation (CONTRACT.md §6): the only kind that may
 * create or change lasting access (device approval, linking and unlinking accounts, password,
 * email, credentials, deleting the account), which would outlive a 1-hour impersonation and
 * carry no trace of it. Otherwise 403 IMPERSONATION_NOT_ALLOWED, before input parsing.
 */
export const lastingAccessProcedure = authedProcedure.use(({ ctx, next }) => {
  if (ctx.auth.session.impersonatedBy) throw new AuthError("IMPERSONATION_NOT_ALLOWED");
  return next();
});

/**
 * Needs a session whose user holds `actions` on `resource` (one role granting them all);
 * otherwise 403 with better-auth's code for the missing action. Runs before input parsing, so
 * a caller without the permission learns nothing from validation errors.
 */
export function withPermission<R extends Resource>(resource: R, actions: readonly Action<R>[]) {
  return authedProcedure.use(({ ctx, next }) => {
    assertPermission(ctx.app.config.admin, ctx.auth.user, resource, actions);
    return next();
  });
}

/**
 * The procedures of a module family switched on by its config section (ARCHITECTURE.md): when
 * `isOn(config)` is false every one answers 404 NOT_FOUND, before the session check and input
 * parsing, as if the routes did not exist. `lastingAccess` is lastingAccessProcedure's rule.
 */
export function moduleProcedures(isOn: (config: Context["app"]["config"]) => boolean) {
  const base = publicProcedure.use(({ ctx, next }) => {
    if (!isOn(ctx.app.config)) throw new AuthError("NOT_FOUND");
    return next();
  });
  const authed = base.use(async ({ ctx, next }) => {
    const auth = await ctx.getSession();
    if (!auth) throw new AuthError("UNAUTHORIZED");
    return next({ ctx: { auth } });
  });
  const lastingAccess = authed.use(({ ctx, next }) => {
    if (ctx.auth.session.impersonatedBy) throw new AuthError("IMPERSONATION_NOT_ALLOWED");
    return next();
  });
  return { public: base, authed, lastingAccess };
}
