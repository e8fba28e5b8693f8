import { isUsernameAvailable, signInRouter, signUpRouter } from "../modules/email-password/email-password.router.ts";
import { okProcedure, sessionProcedures } from "../modules/session/session.router.ts";
import { userProcedures } from "../modules/user/user.router.ts";
import { router } from "./init.ts";

/** The tree mirrors the REST paths, camel-cased (ARCHITECTURE.md). */
export const appRouter = router({
  signUp: signUpRouter,
  signIn: signInRouter,
  isUsernameAvailable,
  ...sessionProcedures,
  ...userProcedures,
  ok: okProcedure,
});

export type AppRouter = typeof appRouter;
