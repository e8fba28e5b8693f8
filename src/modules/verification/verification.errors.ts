import type { ErrorTable } from "../../error-table.ts";

/**
 * Email verification requests. Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const verificationErrors = {
  // 400
  EMAIL_MISMATCH: [400, "Email mismatch"],
  EMAIL_ALREADY_VERIFIED: [400, "Email is already verified"],
} as const satisfies ErrorTable;
