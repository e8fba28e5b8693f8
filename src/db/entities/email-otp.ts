import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/**
 * The live one-time code of an address and type (email-otp, docs/passwordless.md): one row per
 * (address, type), so a new send replaces the old code. Neither the address nor the code is
 * stored: `addressDigest` and `codeDigest` are keyed digests (HMAC under the service secret), so
 * a leaked table names no one and cannot be searched for a 6-digit code offline. `attempts`
 * counts verifications, each spent by a conditional update before the comparison.
 */
export const EmailOtp = defineEntity({
  name: "EmailOtp",
  tableName: "email_otps",
  uniques: [{ properties: ["addressDigest", "type"], name: "email_otps_address_type_unique" }],
  properties: (p) => ({
    id: p.uuid().primary(),
    addressDigest: p.string().length(64),
    type: p.string().length(32),
    codeDigest: p.string().length(64),
    attempts: p.integer().default(0),
    expiresAt: p.datetime().index("email_otps_expires_at_index"),
    createdAt: p.datetime(),
  }),
});

export type IEmailOtp = InferEntity<typeof EmailOtp>;
