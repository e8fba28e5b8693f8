import type { ErrorTable } from "../../error-table.ts";

/**
 * Device authorization (RFC 8628): the user code and its claim. Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const deviceErrors = {
  // 400
  INVALID_USER_CODE: [400, "Invalid user code"],
  EXPIRED_USER_CODE: [400, "User code has expired"],
  DEVICE_CODE_ALREADY_PROCESSED: [400, "Device code already processed"],
  DEVICE_CODE_NOT_CLAIMED: [400, "Device code has not been claimed: open GET /device with the user_code while signed in first"],
  // 403
  DEVICE_CODE_CLAIMED_BY_ANOTHER_USER: [403, "This code was claimed by another user"],
} as const satisfies ErrorTable;
