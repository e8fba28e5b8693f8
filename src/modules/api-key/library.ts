import type { App } from "../../app.ts";
import { AuthError } from "../../errors.ts";
import { adminCreateInput, verifyInput } from "./api-key.schema.ts";
import { createKey, type KeyRecord } from "./keys.service.ts";
import { verifyKey, type VerifyAnswer } from "./verify.service.ts";

/** The operator acting in process (audit records: no actor user, like the CLI). */
const OPERATOR = { userId: null, impersonatorId: null, ip: null, userAgent: null };

function parsed<T>(result: { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } }): T {
  if (result.success) return result.data;
  throw new AuthError("VALIDATION_ERROR", { issues: result.error.issues.map((i) => ({ path: i.path.join("."), message: i.message })) });
}

/**
 * The library API of API keys (docs/machine-access.md "From your own code"): trusted, so every
 * field may be set, the server-only ones included. Bad input throws AuthError like the routes.
 */
export function apiKeyLibrary(app: App) {
  return {
    /** A key for `userId`: the record plus `key`, shown this once. */
    async createApiKey(input: Parameters<typeof adminCreateInput.parse>[0]): Promise<KeyRecord & { key: string }> {
      const { userId, ...fields } = parsed(adminCreateInput.safeParse(input));
      return createKey(app, app.orm.em.fork(), OPERATOR, userId, fields, true);
    },
    /** better-auth's verifyApiKey: `{ valid, error, key }`; spends a use like a request with the key. */
    async verifyApiKey(input: { key: string; permissions?: Record<string, string[]> }): Promise<VerifyAnswer> {
      const { key, permissions } = parsed(verifyInput.safeParse(input));
      return verifyKey(app, app.orm.em.fork(), key, permissions);
    },
  };
}
