import type { ErrorTable } from "../../error-table.ts";

/**
 * Email and password sign-in (docs/wire-contract.md §4). Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const emailPasswordErrors = {
  // 401
  INVALID_EMAIL_OR_PASSWORD: [401, "Invalid email or password"],
  INVALID_USERNAME_OR_PASSWORD: [401, "Invalid username or password"],
  // 403
  EMAIL_NOT_VERIFIED: [403, "Email not verified"],
  EMAIL_PASSWORD_SIGN_UP_DISABLED: [403, "Email and password sign up is not enabled"],
} as const satisfies ErrorTable;
