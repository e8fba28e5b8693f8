import type { ErrorTable } from "../../error-table.ts";

/**
 * API keys (better-auth's api-key plugin codes; the kernel has INVALID_API_KEY, USAGE_EXCEEDED,
 * RATE_LIMITED and API_KEY_SESSION_NOT_ALLOWED, which the hot path answers). Codes are part of
 * the wire contract: add new ones, never rename (src/errors.ts composes the tables).
 */
export const apiKeyErrors = {
  // 400
  SERVER_ONLY_PROPERTY: [400, "The property you're trying to set can only be set from the server auth instance only."],
  INVALID_PREFIX_LENGTH: [400, "The prefix length is either too large or too small."],
  INVALID_NAME_LENGTH: [400, "The name length is either too large or too small."],
  EXPIRES_IN_IS_TOO_SMALL: [400, "The expiresIn is smaller than the predefined minimum value."],
  EXPIRES_IN_IS_TOO_LARGE: [400, "The expiresIn is larger than the predefined maximum value."],
  METADATA_DISABLED: [400, "Metadata is disabled."],
  INVALID_METADATA_TYPE: [400, "metadata must be an object or undefined"],
  METADATA_TOO_LARGE: [400, "metadata must be at most 4 KiB of JSON"],
  NO_VALUES_TO_UPDATE: [400, "No values to update."],
  REFILL_AMOUNT_AND_INTERVAL_REQUIRED: [400, "refillAmount is required when refillInterval is provided"],
  REFILL_INTERVAL_AND_AMOUNT_REQUIRED: [400, "refillInterval is required when refillAmount is provided"],
  // 404
  KEY_NOT_FOUND: [404, "API Key not found"],
} as const satisfies ErrorTable;
