import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

export const Account = defineEntity({
  name: "Account",
  tableName: "accounts",
  uniques: [{ properties: ["providerId", "accountId"], name: "accounts_provider_account_unique" }],
  properties: (p) => ({
    id: p.uuid().primary(),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("accounts_user_id_index"),
    providerId: p.string().length(255),
    accountId: p.string().length(255),
    // argon2id hash, credential accounts only.
    password: p.text().nullable(),
    // Provider tokens, encrypted at rest (versioned AES-256-GCM envelope).
    accessToken: p.text().nullable(),
    refreshToken: p.text().nullable(),
    idToken: p.text().nullable(),
    accessTokenExpiresAt: p.datetime().nullable(),
    refreshTokenExpiresAt: p.datetime().nullable(),
    scope: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});

export type IAccount = InferEntity<typeof Account>;
