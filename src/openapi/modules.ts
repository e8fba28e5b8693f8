import { adminDoc } from "../modules/admin/index.ts";
import { deviceDoc } from "../modules/device/index.ts";
import { emailPasswordDoc } from "../modules/email-password/index.ts";
import { healthDoc } from "../modules/maintenance/index.ts";
import { jwtDoc } from "../modules/jwt/index.ts";
import { oauthDoc } from "../modules/oauth/index.ts";
import { passkeyDoc } from "../modules/passkey/index.ts";
import { passwordResetDoc } from "../modules/password-reset/index.ts";
import { sessionDoc } from "../modules/session/index.ts";
import { twoFactorDoc } from "../modules/two-factor/index.ts";
import { userDoc } from "../modules/user/index.ts";
import { verificationDoc } from "../modules/verification/index.ts";
import { magicLinkDoc } from "../modules/magic-link/index.ts";
import { emailOtpDoc } from "../modules/email-otp/index.ts";
import { apiKeyDoc } from "../modules/api-key/index.ts";
import { oidcProviderDoc } from "../modules/oidc-provider/index.ts";
import { organizationDoc } from "../modules/organization/index.ts";
import type { OperationDoc } from "./doc.ts";

/** Every module's docs, in the order of the document's tags. */
export const moduleDocs = [
  emailPasswordDoc,
  sessionDoc,
  userDoc,
  verificationDoc,
  passwordResetDoc,
  oauthDoc,
  twoFactorDoc,
  passkeyDoc,
  deviceDoc,
  adminDoc,
  jwtDoc,
  healthDoc,
  magicLinkDoc,
  emailOtpDoc,
  apiKeyDoc,
  oidcProviderDoc,
  organizationDoc,
] as const;

type Merge<T extends readonly unknown[]> = T extends readonly [{ operations: infer Ops }, ...infer Rest] ? Ops & Merge<Rest> : unknown;
/** Documented procedure path → its doc, with the exact output schema types (test/integration/openapi/openapi-outputs.types.ts). */
export type DocumentedOperations = Merge<typeof moduleDocs>;

/** Procedure path → its doc and its module's tag. */
export function operationDocs(): Map<string, { doc: OperationDoc; tag: string }> {
  const all = new Map<string, { doc: OperationDoc; tag: string }>();
  for (const mod of moduleDocs) {
    for (const [procedure, doc] of Object.entries(mod.operations)) {
      if (all.has(procedure)) throw new Error(`${procedure} is documented twice`);
      all.set(procedure, { doc, tag: mod.tag });
    }
  }
  return all;
}
