import { z } from "zod";
import { actorOf, findUser, recordAudit } from "../../core/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { withPermission } from "../../trpc/init.ts";
import { removeTwoFactor } from "./enrollment.service.ts";

const userIdInput = z.object({ userId: z.string().min(1, "is required").max(64) });

/**
 * POST /admin/reset-two-factor: turns the user's two-factor off and forgets everything it held
 * (enrollment, backup codes, pending sign-ins, trusted devices), for a user who lost their
 * authenticator. A credential reset like set-user-password (a password alone lets them in again),
 * so the same permission, from the admin's own session; audited. Composed into the admin router
 * (src/trpc/app-router.ts).
 */
export const resetTwoFactor = withPermission("user", ["set-password"], { lasting: true })
  .input(userIdInput)
  .mutation(async ({ ctx, input }) => {
    if (!(await findUser(ctx.em, input.userId))) throw new AuthError("USER_NOT_FOUND");
    await inTransaction(ctx.em, async (tx) => {
      await removeTwoFactor(ctx.app, tx, input.userId);
      await recordAudit(tx, ctx.app.clock, actorOf(ctx.auth, ctx.req), { action: "reset-two-factor", targetType: "user", targetId: input.userId });
    });
    return { success: true as const };
  });
