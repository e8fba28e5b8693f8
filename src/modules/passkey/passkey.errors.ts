import type { ErrorTable } from "../../error-table.ts";

/**
 * Passkeys (better-auth's passkey plugin codes). Codes are part of the wire contract: add
 * new ones, never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const passkeyErrors = {
  // 400
  CHALLENGE_NOT_FOUND: [400, "Challenge not found"],
  FAILED_TO_VERIFY_REGISTRATION: [400, "Failed to verify registration"],
  AUTHENTICATION_FAILED: [400, "Authentication failed"],
  // 401
  PASSKEY_NOT_FOUND: [401, "Passkey not found"],
  YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY: [401, "You are not allowed to register this passkey"],
} as const satisfies ErrorTable;
