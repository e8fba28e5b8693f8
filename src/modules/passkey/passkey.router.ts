import type { Context } from "../../trpc/context.ts";
import { moduleProcedures, router } from "../../trpc/init.ts";
import { handOverSession } from "../../trpc/effects.ts";
import { publicSession, publicUser } from "../../core/index.ts";
import { CHALLENGE_COOKIE, CHALLENGE_TTL_SEC } from "./passkey.challenge.ts";
import * as schema from "./passkey.schema.ts";
import * as service from "./passkey.service.ts";
import { signInAudit } from "../../trpc/sign-in-audit.ts";

/** better-auth's passkey plugin endpoints (rest-bridge/routes.ts, `// passkey`); 404 when `passkey.enabled` is false. */
const procedures = moduleProcedures("passkey", (config) => config.passkey.enabled);

/**
 * Adding a passkey creates lasting access: the user's own session (docs/wire-contract.md §6),
 * signed in within `session.freshAgeSec` (better-auth's freshSessionMiddleware: 403 SESSION_NOT_FRESH).
 */
const freshAccess = procedures.fresh;

function setChallengeCookie(ctx: Context, token: string): void {
  (ctx.effects.cookies ??= []).push({ name: CHALLENGE_COOKIE, value: token, maxAgeSec: CHALLENGE_TTL_SEC });
}

/** The challenge is used up either way; the cookie goes once the ceremony has succeeded. */
function clearChallengeCookie(ctx: Context): void {
  (ctx.effects.cookies ??= []).push({ name: CHALLENGE_COOKIE, value: "", maxAgeSec: 0 });
}

const requestMeta = (ctx: Context) => ({ ip: ctx.req.ip, userAgent: ctx.req.userAgent, requestId: ctx.req.requestId });

export const passkeyRouter = router({
  generateRegisterOptions: freshAccess.input(schema.registerOptionsInput).query(async ({ ctx, input }) => {
    const { options, challengeToken } = await service.registrationOptions(ctx.app, ctx.em, ctx.auth.user, input ?? {});
    setChallengeCookie(ctx, challengeToken);
    return options;
  }),

  verifyRegistration: freshAccess.input(schema.verifyRegistrationInput).mutation(async ({ ctx, input }) => {
    const passkey = await service.verifyRegistration(ctx.app, ctx.em, requestMeta(ctx), ctx.auth.user.id, ctx.readCookie(CHALLENGE_COOKIE), input);
    clearChallengeCookie(ctx);
    return passkey;
  }),

  /** GET (better-auth's client) and POST (its docs): no session needed; with one, that user's passkeys are allowed. */
  generateAuthenticateOptions: procedures.public.input(schema.authenticateOptionsInput).query(async ({ ctx }) => {
    const auth = await ctx.getSession();
    const { options, challengeToken } = await service.authenticationOptions(ctx.app, ctx.em, auth?.user.id ?? null);
    setChallengeCookie(ctx, challengeToken);
    return options;
  }),

  verifyAuthentication: procedures.public.input(schema.verifyAuthenticationInput).use(signInAudit("passkey")).mutation(async ({ ctx, input }) => {
    const signedIn = await service.verifyAuthentication(ctx.app, ctx.em, requestMeta(ctx), ctx.readCookie(CHALLENGE_COOKIE), input.response);
    clearChallengeCookie(ctx);
    handOverSession(ctx, signedIn);
    return { session: { ...publicSession(signedIn.session), token: signedIn.token }, user: publicUser(signedIn.user) };
  }),

  /** Reading is allowed to an impersonation session. */
  listUserPasskeys: procedures.authed.query(({ ctx }) => service.listPasskeys(ctx.em, ctx.auth.user.id)),

  deletePasskey: procedures.lastingAccess.input(schema.deletePasskeyInput).mutation(async ({ ctx, input }) => {
    await service.deletePasskey(ctx.em, ctx.auth.user.id, input.id);
    return { status: true as const };
  }),

  updatePasskey: procedures.lastingAccess.input(schema.updatePasskeyInput).mutation(async ({ ctx, input }) => {
    const passkey = await service.renamePasskey(ctx.em, ctx.auth.user.id, input.id, input.name);
    return { passkey };
  }),
});
