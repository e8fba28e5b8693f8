import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/** Single-use records (email verification, password reset, OAuth state) keyed by a token digest. */
export const Verification = defineEntity({
  name: "Verification",
  tableName: "verifications",
  properties: (p) => ({
    id: p.uuid().primary(),
    identifier: p.string().length(64).unique("verifications_identifier_unique"),
    purpose: p.string().length(64),
    value: p.text(),
    expiresAt: p.datetime().index("verifications_expires_at_index"),
    createdAt: p.datetime(),
  }),
});

export type IVerification = InferEntity<typeof Verification>;
