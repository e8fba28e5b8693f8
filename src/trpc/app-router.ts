import { adminRouter } from "../modules/admin/index.ts";
import { deviceRouter } from "../modules/device/index.ts";
import { isUsernameAvailable, signInRouter, signUpRouter } from "../modules/email-password/index.ts";
import { jwtProcedures } from "../modules/jwt/index.ts";
import { readyProcedure } from "../modules/maintenance/index.ts";
import { oauthProcedures } from "../modules/oauth/index.ts";
import { passkeyRouter } from "../modules/passkey/index.ts";
import { passwordResetProcedures } from "../modules/password-reset/index.ts";
import { okProcedure, sessionProcedures } from "../modules/session/index.ts";
import { resetTwoFactor, twoFactorRouter } from "../modules/two-factor/index.ts";
import { userProcedures } from "../modules/user/index.ts";
import { verificationProcedures } from "../modules/verification/index.ts";
import { magicLinkRouter, signInMagicLink } from "../modules/magic-link/index.ts";
import { emailOtpRouter, forgetPasswordRouter, signInEmailOtp } from "../modules/email-otp/index.ts";
import { apiKeyAdminProcedures, apiKeyRouter } from "../modules/api-key/index.ts";
import { adminOauth2Router, oauth2Router } from "../modules/oidc-provider/index.ts";
import { getOrganizationAsAdmin, listAllOrganizations, listUserOrganizations, organizationRouter } from "../modules/organization/index.ts";
import { router } from "./init.ts";

const { signInSocial, ...socialProcedures } = oauthProcedures;

// Composed branches are declared as interfaces, so that the app router's declaration names them
// instead of spelling every procedure out: spelled out, it passes the compiler's limit for one
// declaration (TS7056). A family's own router does the same when it grows large.
const signInComposed = router({ ...signInRouter._def.record, social: signInSocial, magicLink: signInMagicLink, emailOtp: signInEmailOtp });
type SignInComposed = typeof signInComposed;
export interface SignInRouter extends SignInComposed {}
const adminComposed = router({
  ...adminRouter._def.record,
  resetTwoFactor,
  ...apiKeyAdminProcedures,
  oauth2: adminOauth2Router,
  listUserOrganizations,
  listOrganizations: listAllOrganizations,
  getOrganization: getOrganizationAsAdmin,
});
type AdminComposed = typeof adminComposed;
export interface AdminRouter extends AdminComposed {}
const signIn: SignInRouter = signInComposed;
const admin: AdminRouter = adminComposed;

/**
 * The tree mirrors the REST paths, camel-cased (docs/architecture.md): the composition root,
 * the one place (with src/modules/index.ts) that knows every family. A family's procedure may
 * sit under another's path (admin.resetTwoFactor is two-factor's).
 */
export const appRouter = router({
  signUp: signUpRouter,
  signIn,
  isUsernameAvailable,
  ...sessionProcedures,
  ...userProcedures,
  ...verificationProcedures,
  ...passwordResetProcedures,
  ...socialProcedures,
  twoFactor: twoFactorRouter,
  device: deviceRouter,
  admin,
  passkey: passkeyRouter,
  ok: okProcedure,
  ready: readyProcedure,
  ...jwtProcedures,
  magicLink: magicLinkRouter,
  emailOtp: emailOtpRouter,
  forgetPassword: forgetPasswordRouter,
  apiKey: apiKeyRouter,
  oauth2: oauth2Router,
  organization: organizationRouter,
});

export type AppRouter = typeof appRouter;
