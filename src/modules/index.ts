import type { Family } from "../core/index.ts";
import { deviceFamily } from "./device/index.ts";
import { jwtFamily } from "./jwt/index.ts";
import { apiKeyFamily } from "./api-key/index.ts";
import { emailOtpFamily } from "./email-otp/index.ts";
import { organizationFamily } from "./organization/index.ts";
import { oauthFamily } from "./oauth/index.ts";
import { passkeyFamily } from "./passkey/index.ts";
import { twoFactorFamily } from "./two-factor/index.ts";
import { userFamily } from "./user/index.ts";
import { oidcProviderFamily } from "./oidc-provider/index.ts";

/**
 * The families that put something into the kernel (core/registry.ts), in the order their hooks
 * run. A new family adds itself here and to src/trpc/app-router.ts; nothing else learns of it.
 */
export const FAMILIES: readonly Family[] = [
  twoFactorFamily,
  deviceFamily,
  passkeyFamily,
  oauthFamily,
  userFamily,
  jwtFamily,
  emailOtpFamily,
  apiKeyFamily,
  oidcProviderFamily,
  organizationFamily,
];
