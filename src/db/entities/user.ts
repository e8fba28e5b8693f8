import { defineEntity, type InferEntity } from "@mikro-orm/core";

export const User = defineEntity({
  name: "User",
  tableName: "users",
  properties: (p) => ({
    id: p.uuid().primary(),
    // Stored lower-cased (CONTRACT.md §2); uniqueness is the database's job.
    email: p.string().length(320).unique("users_email_unique"),
    emailVerified: p.boolean().default(false),
    name: p.string().length(1024),
    image: p.text().nullable(),
    username: p.string().length(64).nullable().unique("users_username_unique"),
    displayUsername: p.string().length(64).nullable(),
    role: p.string().length(255).default("user"),
    banned: p.boolean().default(false),
    banReason: p.text().nullable(),
    banExpires: p.datetime().nullable(),
    /** Set by the first verified second factor (two-factor module); read on the session check. */
    twoFactorEnabled: p.boolean().default(false),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});

export type IUser = InferEntity<typeof User>;
