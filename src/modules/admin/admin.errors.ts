import type { ErrorTable } from "../../error-table.ts";

/**
 * Admin (better-auth's admin plugin codes). Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const adminErrors = {
  // 400
  YOU_CANNOT_BAN_YOURSELF: [400, "You cannot ban yourself"],
  YOU_CANNOT_REMOVE_YOURSELF: [400, "You cannot remove yourself"],
  NOT_IMPERSONATING: [400, "You are not impersonating anyone"],
  NO_DATA_TO_UPDATE: [400, "No data to update"],
  PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER: [400, "Password cannot be updated through update-user. Use the set-user-password endpoint instead"],
  YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE: [400, "You are not allowed to set a non-existent role value"],
  // 403
  YOU_CANNOT_IMPERSONATE_ADMINS: [403, "You cannot impersonate admins"],
} as const satisfies ErrorTable;
