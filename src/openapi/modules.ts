import { adminDoc } from "../modules/admin/admin.openapi.ts";
import { deviceDoc } from "../modules/device/device.openapi.ts";
import { emailPasswordDoc } from "../modules/email-password/email-password.openapi.ts";
import { healthDoc } from "../modules/maintenance/maintenance.openapi.ts";
import { oauthDoc } from "../modules/oauth/oauth.openapi.ts";
import { passkeyDoc } from "../modules/passkey/passkey.openapi.ts";
import { passwordResetDoc } from "../modules/password-reset/password-reset.openapi.ts";
import { sessionDoc } from "../modules/session/session.openapi.ts";
import { twoFactorDoc } from "../modules/two-factor/two-factor.openapi.ts";
import { userDoc } from "../modules/user/user.openapi.ts";
import { verificationDoc } from "../modules/verification/verification.openapi.ts";
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
  healthDoc,
] as const;

type Merge<T extends readonly unknown[]> = T extends readonly [{ operations: infer Ops }, ...infer Rest] ? Ops & Merge<Rest> : unknown;
/** Documented procedure path → its doc, with the exact output schema types (test/integration/openapi-outputs.types.ts). */
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
