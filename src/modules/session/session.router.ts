import { z } from "zod";
import { sha256 } from "../../crypto/tokens.ts";
import { accountProcedure, authedProcedure, publicProcedure } from "../../trpc/init.ts";
import { answerGetSession, answerKeySession, endSessionByTokenHash, listActiveSessions, listedToken, publicSession, revokeAllSessions, revokeOwnSession } from "../../core/index.ts";

const revokeInput = z
  .object({ token: z.string().min(1).max(512).optional(), id: z.string().min(1).max(64).optional() })
  .refine((v) => v.token !== undefined || v.id !== undefined, { message: "token or id is required", path: ["token"] });

export const sessionProcedures = {
  // Hot path: no output schema (on a hot read path it costs more than it protects; inputs keep theirs). The REST bridge calls answerGetSession directly.
  getSession: publicProcedure.query(async ({ ctx }) => {
    const answer = await (ctx.apiKey
      ? answerKeySession(ctx.app, ctx.apiKey)
      : answerGetSession(ctx.app, ctx.sessionToken, ctx.tokenSource, () => ctx.readCookie("session_token")));
    if (answer.cookie && !ctx.effects.sessionCookie) ctx.effects.sessionCookie = answer.cookie;
    if (answer.headers) Object.assign(ctx.effects.headers, answer.headers);
    return answer.resolved?.entry.body ?? null;
  }),

  signOut: publicProcedure.mutation(async ({ ctx }) => {
    if (ctx.sessionToken) await endSessionByTokenHash(ctx.app, ctx.em, sha256(ctx.sessionToken));
    ctx.effects.sessionCookie = { clear: true };
    return { success: true as const };
  }),

  /** Each with `token`: the caller's own raw token, a revocation handle for the others (core/session/handles.ts). */
  listSessions: authedProcedure.query(async ({ ctx }) => {
    const sessions = await listActiveSessions(ctx.app, ctx.em, ctx.auth.user.id);
    const caller = { sessionId: ctx.auth.session.id, token: ctx.sessionToken };
    return sessions.map((s) => ({
      ...publicSession({
        ...s,
        userId: s.user.id,
        ipAddress: s.ipAddress ?? null,
        userAgent: s.userAgent ?? null,
        impersonatedBy: s.impersonatedBy ?? null,
        activeOrganizationId: s.activeOrganizationId ?? null,
        activeTeamId: s.activeTeamId ?? null,
      }),
      token: listedToken(ctx.app, s.id, caller),
    }));
  }),

  revokeSession: accountProcedure.input(revokeInput).mutation(async ({ ctx, input }) => {
    await revokeOwnSession(ctx.app, ctx.em, ctx.auth.user.id, input);
    return { status: true as const };
  }),

  revokeSessions: accountProcedure.mutation(async ({ ctx }) => {
    await revokeAllSessions(ctx.app, ctx.em, ctx.auth.user.id);
    return { status: true as const };
  }),

  revokeOtherSessions: accountProcedure.mutation(async ({ ctx }) => {
    await revokeAllSessions(ctx.app, ctx.em, ctx.auth.user.id, ctx.auth.session.id);
    return { status: true as const };
  }),
};

export const okProcedure = publicProcedure.query(() => ({ ok: true as const }));

