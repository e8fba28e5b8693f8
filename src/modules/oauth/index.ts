import type { Family } from "../../core/index.ts";
import { Verification } from "../../db/entities/index.ts";
import { STATE_PURPOSE } from "./state.ts";

export { oauthDoc } from "./oauth.openapi.ts";
export { oauthProcedures } from "./oauth.router.ts";

/**
 * Social sign-in in the kernel: whatever removes what a user holds (takeover, reset, deletion)
 * also ends their /link-social flows in flight, whose state holds `"linkUserId":"<id>"` (a UUID:
 * no LIKE wildcard; a quote inside another JSON string is escaped, so no URL field can match it).
 */
export const oauthFamily: Family = {
  name: "oauth",
  holding: {
    async removed(_app, tx, userId) {
      await tx.nativeDelete(Verification, { purpose: STATE_PURPOSE, value: { $like: `%"linkUserId":${JSON.stringify(userId)}%` } });
    },
  },
};
