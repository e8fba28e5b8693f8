import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

/** A WebAuthn credential (better-auth's `passkey` model). The public key is not a secret. */
export const Passkey = defineEntity({
  name: "Passkey",
  tableName: "passkeys",
  properties: (p) => ({
    id: p.uuid().primary(),
    name: p.string().length(255).nullable(),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("passkeys_user_id_index"),
    /** base64url credential id, as the authenticator reports it. */
    credentialId: p.string().length(1400).unique("passkeys_credential_id_unique"),
    /** COSE public key, base64. */
    publicKey: p.text(),
    counter: p.bigint("number").default(0),
    deviceType: p.string().length(32),
    backedUp: p.boolean().default(false),
    transports: p.string().length(255).nullable(),
    aaguid: p.string().length(64).nullable(),
    createdAt: p.datetime(),
  }),
});

export type IPasskey = InferEntity<typeof Passkey>;
