/** THE scenario list: every area's scenarios, in the order they run on both servers. */
import type { Scenario } from "./runner.ts";
import { account } from "./scenarios/account.ts";
import { adminScenarios } from "./scenarios/admin.ts";
import { device } from "./scenarios/device.ts";
import { emailPassword } from "./scenarios/email-password.ts";
import { jwt } from "./scenarios/jwt.ts";
import { apiKey } from "./scenarios/api-key.ts";
import { mail } from "./scenarios/mail.ts";
import { misc } from "./scenarios/misc.ts";
import { organization } from "./scenarios/organization.ts";
import { passkey } from "./scenarios/passkey.ts";
import { passwordless } from "./scenarios/passwordless.ts";
import { social } from "./scenarios/social.ts";
import { twoFactor } from "./scenarios/two-factor.ts";
import { user } from "./scenarios/user.ts";
import { oidcProvider } from "./scenarios/oidc-provider.ts";
import { oidcPages } from "./scenarios/oidc-pages.ts";

export const scenarios: Scenario[] = [
  ...emailPassword,
  ...user,
  ...mail,
  ...account,
  ...social,
  ...device,
  ...adminScenarios,
  ...twoFactor,
  ...passkey,
  ...jwt,
  ...apiKey,
  ...misc,
  ...passwordless,
  ...oidcProvider,
  ...oidcPages,
  ...organization,
];
