import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

/**
 * One device authorization request (RFC 8628 §3.1-3.5). The device code is stored as its
 * SHA-256 digest only; the user code is stored normalized (8 characters, no dash).
 */
export const DeviceCode = defineEntity({
  name: "DeviceCode",
  tableName: "device_codes",
  properties: (p) => ({
    id: p.uuid().primary(),
    deviceCodeHash: p.string().length(64).unique("device_codes_device_code_hash_unique"),
    // Unique among stored rows; expired rows holding a code are purged before it is reused.
    userCode: p.string().length(8).unique("device_codes_user_code_unique"),
    clientId: p.string().length(255),
    scope: p.text().nullable(),
    // pending | approved | denied (an approved code is deleted when its token is issued).
    status: p.string().length(16),
    // The signed-in user who claimed the code (GET /device), then approved or denied it.
    user: p.manyToOne(User).ref().nullable().deleteRule("cascade").index("device_codes_user_id_index"),
    intervalSec: p.integer(),
    lastPolledAt: p.datetime().nullable(),
    expiresAt: p.datetime().index("device_codes_expires_at_index"),
    createdAt: p.datetime(),
  }),
});

export type IDeviceCode = InferEntity<typeof DeviceCode>;
