import { AuthError, OAuthError, type ErrorCode } from "../../errors.ts";
import { authedProcedure, lastingAccessProcedure, middleware, publicProcedure, router } from "../../trpc/init.ts";
import * as schema from "./device.schema.ts";
import * as service from "./device.service.ts";

/** RFC 6749 §5.2 invalid_request for a missing, empty or oversized parameter. */
function required(name: string, value: string | undefined, maxLength: number): string {
  if (value === undefined || value === "") throw new OAuthError("INVALID_REQUEST", `${name} is required`);
  if (value.length > maxLength) throw new OAuthError("INVALID_REQUEST", `${name} is too long`);
  return value;
}

/** RFC 6749 §5.1: token responses must not be cached (the bridge sends no-store on all JSON). */
const NO_CACHE = { pragma: "no-cache" };

/**
 * Approve and deny answer in the RFC 6749 §5.2 shape like the other device endpoints, with
 * better-auth's device plugin's names and statuses; tRPC keeps the precise code in data.authCode.
 * Left as they are: VALIDATION_ERROR (better-auth's own validation answers that shape too) and
 * IMPERSONATION_NOT_ALLOWED (docs/wire-contract.md §6 names it for device approval).
 */
export const DECISION_ERRORS: Readonly<Partial<Record<ErrorCode, string>>> = {
  UNAUTHORIZED: "unauthorized",
  INVALID_USER_CODE: "invalid_request",
  EXPIRED_USER_CODE: "expired_token",
  DEVICE_CODE_ALREADY_PROCESSED: "invalid_request",
  DEVICE_CODE_NOT_CLAIMED: "invalid_request",
  DEVICE_CODE_CLAIMED_BY_ANOTHER_USER: "access_denied",
  // The token endpoint answers access_denied for a banned approver too.
  BANNED_USER: "access_denied",
};

/** Outermost, so it also sees the session guards' refusals. */
const decisionErrors = middleware(async ({ next }) => {
  const result = await next();
  if (result.ok || !(result.error instanceof AuthError) || result.error instanceof OAuthError) return result;
  const error = DECISION_ERRORS[result.error.authCode];
  if (!error) return result;
  throw new OAuthError(result.error.authCode, result.error.message, error);
});
const decisionProcedure = publicProcedure.use(decisionErrors);

export const deviceRouter = router({
  // RFC 8628 §3.1-3.2
  code: publicProcedure.input(schema.codeInput).mutation(async ({ ctx, input }) => {
    const clientId = required("client_id", input.client_id, 255);
    if (input.scope !== undefined && input.scope.length > 2048) throw new OAuthError("INVALID_REQUEST", "scope is too long");
    Object.assign(ctx.effects.headers, NO_CACHE);
    return service.requestCode(ctx.app, ctx.em, { clientId, scope: input.scope || null });
  }),

  // RFC 8628 §3.4-3.5
  token: publicProcedure.input(schema.tokenInput).mutation(async ({ ctx, input }) => {
    const grantType = required("grant_type", input.grant_type, 256);
    if (grantType !== service.DEVICE_CODE_GRANT) throw new OAuthError("UNSUPPORTED_GRANT_TYPE", `grant_type must be ${service.DEVICE_CODE_GRANT}`);
    const deviceCode = required("device_code", input.device_code, 256);
    const clientId = required("client_id", input.client_id, 255);
    Object.assign(ctx.effects.headers, NO_CACHE);
    return service.pollToken(ctx.app, ctx.em, ctx.req, { deviceCode, clientId });
  }),

  // RFC 8628 §3.3: the verification URI's lookup; claims the code for a signed-in caller.
  verify: publicProcedure.input(schema.verifyInput).query(async ({ ctx, input }) => {
    const auth = await ctx.getSession();
    return service.verify(ctx.app, ctx.em, input.user_code, auth?.user.id ?? null);
  }),

  // Approval turns into a session that outlives an impersonation; deny only takes access away.
  approve: decisionProcedure.concat(lastingAccessProcedure).input(schema.decisionInput).mutation(({ ctx, input }) =>
    service.decide(ctx.app, ctx.em, input.userCode, ctx.auth.user.id, "approved"),
  ),

  deny: decisionProcedure.concat(authedProcedure).input(schema.decisionInput).mutation(({ ctx, input }) =>
    service.decide(ctx.app, ctx.em, input.userCode, ctx.auth.user.id, "denied"),
  ),
});
