import { adminRouter } from "../modules/admin/admin.router.ts";
import { deviceRouter } from "../modules/device/device.router.ts";
import { isUsernameAvailable, signInRouter, signUpRouter } from "../modules/email-password/email-password.router.ts";
import { passwordResetProcedures } from "../modules/password-reset/password-reset.router.ts";
import { okProcedure, sessionProcedures } from "../modules/session/session.router.ts";
import { userProcedures } from "../modules/user/user.router.ts";
import { verificationProcedures } from "../modules/verification/verification.router.ts";
import { router } from "./init.ts";

/** The tree mirrors the REST paths, camel-cased (ARCHITECTURE.md). */
export const appRouter = router({
  signUp: signUpRouter,
  signIn: signInRouter,
  isUsernameAvailable,
  ...sessionProcedures,
  ...userProcedures,
  ...verificationProcedures,
  ...passwordResetProcedures,
  device: deviceRouter,
  admin: adminRouter,
  ok: okProcedure,
});

export type AppRouter = typeof appRouter;
