import { z } from "zod";
import { callbackURL, emailAddress, formBoolean, password, userImage } from "../../trpc/schema.ts";
import { actorOf, publicUser, verifyCurrentPassword } from "../../core/index.ts";
import { requestChangeEmail } from "./change-email.service.ts";
import { deleteUser, deleteUserCallback } from "./delete-user.service.ts";
import { authedProcedure, lastingAccessProcedure, stepUpProcedure } from "../../trpc/init.ts";
import { handOverSession, resendSessionCookie } from "../../trpc/effects.ts";
import * as service from "./user.service.ts";
import { callbackWith } from "../../mail/links.ts";

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

const changeEmailInput = z.object({ newEmail: emailAddress, callbackURL });

const deleteUserInput = z.object({
  password: password.optional(),
  token: z.string().min(1).max(512).optional(),
  callbackURL,
});

const deleteUserCallbackInput = z.object({ token: z.string().min(1, "is required").max(512), callbackURL });

const DELETED = { success: true as const, message: "User deleted" as const };

export const userProcedures = {
  updateUser: authedProcedure.input(updateUserInput).mutation(async ({ ctx, input }) => {
    await service.updateUser(ctx.app, ctx.em, ctx.auth.user.id, input);
    resendSessionCookie(ctx, ctx.auth);
    return { status: true as const };
  }),

  changePassword: stepUpProcedure.input(changePasswordInput).mutation(async ({ ctx, input }) => {
    const result = await service.changePassword(ctx.app, ctx.em, ctx.req, ctx.auth, ctx.stepUp, input);
    handOverSession(ctx, result);
    return { token: result.token, user: publicUser(result.user) };
  }),

  verifyPassword: authedProcedure.input(z.object({ password })).mutation(async ({ ctx, input }) => {
    // A user without a password gets INVALID_PASSWORD after the same argon2 work as a wrong one.
    await verifyCurrentPassword(ctx.app, ctx.em, { userId: ctx.auth.user.id, ip: ctx.req.ip }, input.password, "INVALID_PASSWORD");
    return { status: true as const };
  }),

  changeEmail: lastingAccessProcedure.input(changeEmailInput).mutation(async ({ ctx, input }) => {
    await requestChangeEmail(ctx.app, ctx.em, ctx.req, ctx.auth.user, input.newEmail, input.callbackURL);
    return { status: true as const };
  }),

  /** A fresh session or the password deletes at once; otherwise a confirmation link is mailed. */
  deleteUser: stepUpProcedure.input(deleteUserInput).mutation(async ({ ctx, input }) => {
    const outcome = await deleteUser(ctx.app, ctx.em, ctx.req, ctx.auth, actorOf(ctx.auth, ctx.req), ctx.stepUp, input);
    if (outcome === "mailed") return { success: true as const, message: "Verification email sent" as const };
    ctx.effects.sessionCookie = { clear: true };
    return DELETED;
  }),

  /** The mailed link: a GET, but it deletes (a mutation, like verify-email). 302 to callbackURL when given. */
  deleteUserCallback: lastingAccessProcedure.input(deleteUserCallbackInput).mutation(async ({ ctx, input }) => {
    await deleteUserCallback(ctx.app, ctx.em, ctx.auth, actorOf(ctx.auth, ctx.req), input.token);
    ctx.effects.sessionCookie = { clear: true };
    if (input.callbackURL) ctx.effects.redirect = callbackWith(ctx.app, input.callbackURL, {});
    return DELETED;
  }),
};
