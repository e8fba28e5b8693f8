import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

/**
 * An API key (better-auth's `apikey` model, docs/machine-access.md "API keys"): the key itself is
 * never stored, only its SHA-256 (`keyHash`, the one indexed lookup of a key-backed request) and
 * its first characters (`start`) for people to recognise it. `remaining` and the rate-limit window
 * (`requestCount` since `lastRequest`) are spent by conditional updates only.
 */
export const ApiKey = defineEntity({
  name: "ApiKey",
  tableName: "api_keys",
  properties: (p) => ({
    id: p.uuid().primary(),
    configId: p.string().length(64).default("default"),
    name: p.string().length(255).nullable(),
    start: p.string().length(64).nullable(),
    prefix: p.string().length(64).nullable(),
    keyHash: p.string().length(64).unique("api_keys_key_hash_unique"),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("api_keys_user_id_index"),
    enabled: p.boolean().default(true),
    rateLimitEnabled: p.boolean().default(true),
    /** Milliseconds. */
    rateLimitTimeWindow: p.bigint("number").nullable(),
    rateLimitMax: p.integer().nullable(),
    requestCount: p.integer().default(0),
    remaining: p.integer().nullable(),
    refillAmount: p.integer().nullable(),
    /** Milliseconds. */
    refillInterval: p.bigint("number").nullable(),
    lastRefillAt: p.datetime().nullable(),
    lastRequest: p.datetime().nullable(),
    /** Null: never expires. Swept once past (maintenance/sweeper.ts), as better-auth deletes expired keys. */
    expiresAt: p.datetime().nullable().index("api_keys_expires_at_index"),
    /** JSON object. */
    metadata: p.text().nullable(),
    /** JSON object of resource → actions. */
    permissions: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});

export type IApiKey = InferEntity<typeof ApiKey>;
