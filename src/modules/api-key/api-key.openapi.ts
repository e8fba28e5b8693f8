import { z } from "zod";
import { moduleDoc } from "../../openapi/doc.ts";
import type { ErrorCode } from "../../errors.ts";

const date = z.iso.datetime();
/** better-auth 1.6's `apikey` record, as apiKeyClient reads it: never the key, never its digest. */
const keyRecord = z.object({
  id: z.string(),
  configId: z.string(),
  name: z.string().nullable(),
  start: z.string().nullable(),
  prefix: z.string().nullable(),
  referenceId: z.string(),
  enabled: z.boolean(),
  rateLimitEnabled: z.boolean(),
  rateLimitTimeWindow: z.number().nullable(),
  rateLimitMax: z.number().nullable(),
  requestCount: z.number(),
  remaining: z.number().nullable(),
  refillAmount: z.number().nullable(),
  refillInterval: z.number().nullable(),
  lastRefillAt: date.nullable(),
  lastRequest: date.nullable(),
  expiresAt: date.nullable(),
  createdAt: date,
  updatedAt: date,
  metadata: z.record(z.string(), z.unknown()).nullable(),
  permissions: z.record(z.string(), z.array(z.string())).nullable(),
});
const list = z.object({ apiKeys: z.array(keyRecord), total: z.number(), limit: z.number().optional(), offset: z.number().optional() });
const FIELDS: ErrorCode[] = [
  "SERVER_ONLY_PROPERTY", "INVALID_NAME_LENGTH", "EXPIRES_IN_IS_TOO_SMALL", "EXPIRES_IN_IS_TOO_LARGE", "METADATA_DISABLED", "INVALID_METADATA_TYPE",
  "METADATA_TOO_LARGE", "REFILL_AMOUNT_AND_INTERVAL_REQUIRED", "REFILL_INTERVAL_AND_AMOUNT_REQUIRED",
];
const switchable = true;

/** OpenAPI docs of api-key.router.ts (src/openapi/doc.ts): better-auth's api-key plugin shapes. */
export const apiKeyDoc = moduleDoc({
  tag: "API keys",
  description:
    "Long-lived keys for scripts and integrations (docs/machine-access.md). A request with the `x-api-key` header (`apiKey.apiKeyHeaders`) acts as the " +
    "key's owner on every route that takes a session, except account security (403 API_KEY_SESSION_NOT_ALLOWED). Off (404) unless `apiKey.enabled`.",
  operations: {
    "apiKey.create": {
      summary: "Create an API key",
      description: "The record plus `key`, shown once. Server-only fields (limits, permissions) answer 400 SERVER_ONLY_PROPERTY.",
      access: "own-session",
      switchable,
      output: keyRecord.extend({ key: z.string() }),
      errors: [...FIELDS, "INVALID_PREFIX_LENGTH"],
    },
    "apiKey.get": { summary: "One of the caller's keys", access: "session", switchable, output: keyRecord, errors: ["KEY_NOT_FOUND"] },
    "apiKey.list": { summary: "The caller's keys", access: "session", switchable, output: list },
    "apiKey.update": {
      summary: "Change one of the caller's keys",
      access: "own-session",
      switchable,
      output: keyRecord,
      errors: [...FIELDS, "KEY_NOT_FOUND", "NO_VALUES_TO_UPDATE"],
    },
    "apiKey.delete": { summary: "Delete one of the caller's keys", access: "session", switchable, output: z.object({ success: z.literal(true) }), errors: ["KEY_NOT_FOUND"] },
    "apiKey.verify": {
      summary: "Verify a key (trusted callers)",
      description: "Spends a use as a request with the key would. `{ valid: false, error: { code } }` for a key that authenticates nobody.",
      access: "session",
      switchable,
      output: z.object({ valid: z.boolean(), error: z.object({ code: z.string(), message: z.string() }).nullable(), key: keyRecord.nullable() }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_VERIFY_API_KEYS"],
    },
    "admin.createApiKey": {
      summary: "Create an API key for a user (admin)",
      description: "Every field, the server-only ones included. From the admin's own session.",
      access: "own-session",
      switchable,
      output: keyRecord.extend({ key: z.string() }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_CREATE_API_KEYS"],
      errors: [...FIELDS, "INVALID_PREFIX_LENGTH", "USER_NOT_FOUND"],
    },
    "admin.listApiKeys": {
      summary: "A user's API keys (admin)",
      access: "session",
      switchable,
      output: z.object({ apiKeys: z.array(keyRecord), total: z.number() }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_API_KEYS"],
    },
    "admin.revokeApiKey": {
      summary: "Revoke any user's API key (admin)",
      access: "session",
      switchable,
      output: z.object({ success: z.literal(true) }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_REVOKE_API_KEYS"],
      errors: ["KEY_NOT_FOUND"],
    },
  },
});
