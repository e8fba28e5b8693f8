import { ApiKey } from "../../db/entities/index.ts";
import { apiKeyChanged, type Family } from "../../core/index.ts";

export { apiKeyDoc } from "./api-key.openapi.ts";
export { apiKeyAdminProcedures, apiKeyRouter } from "./api-key.router.ts";
export { createKey, type KeyRecord } from "./keys.service.ts";
export { verifyKey, type VerifyAnswer } from "./verify.service.ts";
export { apiKeyLibrary } from "./library.ts";

/**
 * API keys in the kernel: a takeover, reset of an unproven account or deletion removes the keys
 * made while nobody had proven the address (a squatter's key would outlive the takeover); a
 * password change keeps them (better-auth does; docs/machine-access.md says how to revoke).
 */
export const apiKeyFamily: Family = {
  name: "api-key",
  holding: {
    async removed(app, tx, userId, removal) {
      if (removal.accounts === "none") return;
      const keys = await tx.find(ApiKey, { user: userId }, { fields: ["id", "keyHash"] });
      if (keys.length === 0) return;
      await tx.nativeDelete(ApiKey, { user: userId });
      for (const k of keys) apiKeyChanged(app, tx, k.keyHash);
    },
  },
};
