import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/**
 * A signing key of the JWT family (src/modules/jwt): the public JWK in clear, the private JWK
 * AES-256-GCM sealed (src/crypto/aead.ts, its id in the envelope so secret rotation keeps
 * working). `epoch` numbers the keys: unique, so two instances rotating at once make one key.
 */
export const JwksKey = defineEntity({
  name: "JwksKey",
  tableName: "jwks_keys",
  properties: (p) => ({
    /** The JWK `kid`. */
    id: p.string().length(64).primary(),
    epoch: p.integer().unique("jwks_keys_epoch_unique"),
    /** JWS algorithm: EdDSA, ES256 or RS256 (better-auth keeps none and guesses it from the config). */
    alg: p.string().length(16),
    /** The public JWK, JSON. */
    publicKey: p.text(),
    /** The private JWK, JSON, sealed. */
    privateKey: p.text(),
    createdAt: p.datetime(),
    /** Signs nothing after this (rotation); stays in the JWKS until its last token has expired. */
    signsUntil: p.datetime(),
  }),
});

export type IJwksKey = InferEntity<typeof JwksKey>;
