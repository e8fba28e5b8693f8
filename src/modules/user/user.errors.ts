import type { ErrorTable } from "../../error-table.ts";

/**
 * Account self-service (docs/wire-contract.md §9). Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const userErrors = {
  // 400
  EMAIL_CAN_NOT_BE_UPDATED: [400, "Email can not be updated"],
  NO_FIELDS_TO_UPDATE: [400, "No fields to update"],
  CHANGE_EMAIL_DISABLED: [400, "Change email is disabled"],
  EMAIL_IS_THE_SAME: [400, "Email is the same"],
} as const satisfies ErrorTable;
