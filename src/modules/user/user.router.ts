import { z } from "zod";
import { formBoolean, password, userImage } from "../../trpc/schema.ts";
import { authedProcedure, lastingAccessProcedure } from "../../trpc/init.ts";
import { handOverSession } from "../email-password/email-password.router.ts";
import { publicUser } from "../session/session.serialize.ts";
import * as service from "./user.service.ts";

const updateUserInput = z.object({
  name: z.string().max(1024).optional(),
  image: userImage,
  username: z.string().max(256).optional(),
  displayUsername: z.string().max(256).optional(),
  // Accepted only to answer 400 EMAIL_CAN_NOT_BE_UPDATED (better-auth's rule).
  email: z.unknown().optional(),
});

const changePasswordInput = z.object({
  currentPassword: password,
  newPassword: password,
  revokeOtherSessions: formBoolean.optional(),
});

export const userProcedures = {
  updateUser: authedProcedure.input(updateUserInput).mutation(async ({ ctx, input }) => {
    await service.updateUser(ctx.app, ctx.em, ctx.auth.user.id, input);
    return { status: true as const };
  }),

  changePassword: lastingAccessProcedure.input(changePasswordInput).mutation(async ({ ctx, input }) => {
    const result = await service.changePassword(ctx.app, ctx.em, ctx.req, ctx.auth, input);
    handOverSession(ctx, result);
    return { token: result.token, user: publicUser(result.user) };
  }),
};
