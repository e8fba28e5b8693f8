import { z } from "zod";

/*
 * better-auth's api-key bodies (docs/machine-access.md). Unknown fields are refused (strict).
 * The server-only fields are accepted by the schema and refused by the service for a user's own
 * request (400 SERVER_ONLY_PROPERTY, as better-auth): admins and the library API may set them.
 */

const keyId = z.string().min(1).max(64);
const count = z.number().int().min(0).max(2_147_483_647);
const ms = z.number().int().min(1).max(10 * 365 * 24 * 3600 * 1000);
const permissions = z.record(z.string().min(1).max(64), z.array(z.string().min(1).max(64)).max(64)).refine((p) => Object.keys(p).length <= 64, "at most 64 resources");

/** The fields only trusted callers set (admins over HTTP, the library API). */
export const serverOnlyFields = {
  permissions: permissions.nullable().optional(),
  remaining: count.nullable().optional(),
  refillAmount: z.number().int().min(1).max(2_147_483_647).optional(),
  refillInterval: ms.optional(),
  rateLimitEnabled: z.boolean().optional(),
  rateLimitTimeWindow: ms.optional(),
  rateLimitMax: z.number().int().min(1).max(2_147_483_647).optional(),
};
export const SERVER_ONLY_KEYS = Object.keys(serverOnlyFields) as (keyof typeof serverOnlyFields)[];

const common = {
  /** Only the default configuration exists. */
  configId: z.literal("default").optional(),
  name: z.string().max(1024).optional(),
  /** Seconds; null: never (better-auth's units). */
  expiresIn: z.number().int().min(1).max(100 * 365 * 24 * 3600).nullable().optional(),
  metadata: z.unknown().optional(),
  ...serverOnlyFields,
};

export const createInput = z.object({ ...common, prefix: z.string().max(64).regex(/^[a-zA-Z0-9_-]+$/, "must be [a-zA-Z0-9_-]").optional() }).strict();
export const adminCreateInput = createInput.extend({ userId: z.string().min(1).max(64) }).strict();
export const updateInput = z.object({ ...common, keyId, enabled: z.boolean().optional() }).strict();
export const getInput = z.object({ id: keyId, configId: z.literal("default").optional() }).strict();
export const deleteInput = z.object({ keyId, configId: z.literal("default").optional() }).strict();
export const listInput = z
  .object({
    configId: z.literal("default").optional(),
    limit: z.coerce.number().int().min(0).max(1000).optional(),
    offset: z.coerce.number().int().min(0).max(1_000_000).optional(),
    sortBy: z.enum(["createdAt", "updatedAt", "name", "expiresAt"]).optional(),
    sortDirection: z.enum(["asc", "desc"]).optional(),
  })
  .strict()
  .optional();
export const adminListInput = z.object({ userId: z.string().min(1).max(64) }).strict();
export const verifyInput = z.object({ key: z.string().min(1).max(512), permissions: permissions.optional(), configId: z.literal("default").optional() }).strict();

export type CreateInput = z.output<typeof createInput>;
export type UpdateInput = z.output<typeof updateInput>;
export type ListInput = z.output<typeof listInput>;
