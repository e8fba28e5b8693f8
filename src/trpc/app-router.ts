import { adminRouter } from "../modules/admin/admin.router.ts";
import { deviceRouter } from "../modules/device/device.router.ts";
import { isUsernameAvailable, signInRouter, signUpRouter } from "../modules/email-password/email-password.router.ts";
import { oauthProcedures } from "../modules/oauth/oauth.router.ts";
import { passkeyRouter } from "../modules/passkey/passkey.router.ts";
import { passwordResetProcedures } from "../modules/password-reset/password-reset.router.ts";
import { okProcedure, sessionProcedures } from "../modules/session/session.router.ts";
import { userProcedures } from "../modules/user/user.router.ts";
import { verificationProcedures } from "../modules/verification/verification.router.ts";
import { readyProcedure } from "../modules/maintenance/ready.ts";
import { twoFactorRouter } from "../modules/two-factor/two-factor.router.ts";
import { router } from "./init.ts";

const { signInSocial, ...socialProcedures } = oauthProcedures;

/** The tree mirrors the REST paths, camel-cased (ARCHITECTURE.md). */
export const appRouter = router({
  signUp: signUpRouter,
  signIn: router({ ...signInRouter._def.record, social: signInSocial }),
  isUsernameAvailable,
  ...sessionProcedures,
  ...userProcedures,
  ...verificationProcedures,
  ...passwordResetProcedures,
  ...socialProcedures,
  twoFactor: twoFactorRouter,
  device: deviceRouter,
  admin: adminRouter,
  passkey: passkeyRouter,
  ok: okProcedure,
  ready: readyProcedure,
});

export type AppRouter = typeof appRouter;
