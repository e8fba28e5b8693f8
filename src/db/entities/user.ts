import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";

/**
 * Admin list-users (modules/admin/list-users.service.ts) at scale: one (column, id) index per
 * sortable column, read forwards or backwards, so a page is an index walk and never a sort of
 * the table (the default order is createdAt, id; email and id sort on their unique indexes).
 * The two search indexes are dialect-specific (migrations Migration20261126000000_list_users):
 * GIN trigram indexes on lower(email) and lower(name) on PostgreSQL (pg_trgm, for the
 * `lower(col) like '%…%'` searches), plain indexes on the same expressions on SQLite, where
 * they make the search's count a scan of a narrow covering index. The schema diff compares
 * expression indexes by name only, so the expressions below are PostgreSQL's.
 */
export const User = defineEntity({
  name: "User",
  tableName: "users",
  indexes: [
    { name: "users_created_at_id_index", properties: ["createdAt", "id"] },
    { name: "users_updated_at_id_index", properties: ["updatedAt", "id"] },
    { name: "users_name_id_index", properties: ["name", "id"] },
    { name: "users_username_id_index", properties: ["username", "id"] },
    { name: "users_role_id_index", properties: ["role", "id"] },
    { name: "users_banned_id_index", properties: ["banned", "id"] },
    { name: "users_email_verified_id_index", properties: ["emailVerified", "id"] },
    // The dashboard's two-factor share (src/db/dashboard.ts): an index-only count.
    { name: "users_two_factor_enabled_index", properties: ["twoFactorEnabled"] },
    { name: "users_email_search_index", expression: `create index "users_email_search_index" on "users" using gin (lower("email") gin_trgm_ops) with (fastupdate = off)` },
    { name: "users_name_search_index", expression: `create index "users_name_search_index" on "users" using gin (lower("name") gin_trgm_ops) with (fastupdate = off)` },
  ],
  properties: (p) => ({
    id: p.uuid().primary(),
    // Stored lower-cased (docs/wire-contract.md §2); uniqueness is the database's job.
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
