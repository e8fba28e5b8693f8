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

/**
 * The tree mirrors the REST paths, camel-cased (docs/architecture.md): the composition root,
 * the one place (with src/modules/index.ts) that knows every family. A family's procedure may
 * sit under another's path (admin.resetTwoFactor is two-factor's).
 */
export const appRouter = router({
  signUp: signUpRouter,
  signIn: router({ ...signInRouter._def.record, social: signInSocial, magicLink: signInMagicLink, emailOtp: signInEmailOtp }),
  isUsernameAvailable,
  ...sessionProcedures,
  ...userProcedures,
  ...verificationProcedures,
  ...passwordResetProcedures,
  ...socialProcedures,
  twoFactor: twoFactorRouter,
  device: deviceRouter,
  admin: router({ ...adminRouter._def.record, resetTwoFactor, ...apiKeyAdminProcedures, oauth2: adminOauth2Router, listUserOrganizations, listOrganizations: listAllOrganizations, getOrganization: getOrganizationAsAdmin }),
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
