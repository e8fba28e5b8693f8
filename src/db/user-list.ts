import { raw } from "./mikro-orm.ts";
import type { EntityManager, FilterQuery } from "@mikro-orm/core";
// Type only: the SQL entity manager both drivers (better-sqlite, postgresql) are built on.
import type { SqlEntityManager } from "@mikro-orm/knex";
import { User, type IUser } from "./entities/index.ts";
import { anyBool, anyDate, mapUser, USER_COLUMNS, type UserRow } from "./session-store/index.ts";
import type { Dialect } from "./target.ts";

/*
 * The SQL of the admin user list (src/modules/admin/list-users.service.ts holds its rules:
 * validation, caches, which read a page takes): each read is one statement answered by an index
 * (the migrations' users_<column>_id_index per sortable column, pg_trgm search indexes on
 * PostgreSQL). Which dialect can do what is decided here, never by the service.
 */

/** The fields a list may be sorted and filtered by, with each one's type and column. */
export const USER_LIST_FIELDS = ["id", "email", "name", "username", "role", "banned", "emailVerified", "createdAt", "updatedAt"] as const;
export type UserField = (typeof USER_LIST_FIELDS)[number];

export type FieldType = "uuid" | "string" | "lowercase" | "boolean" | "date";

/** Each field's type and column. */
export const FIELDS: Record<UserField, { type: FieldType; column: string }> = {
  id: { type: "uuid", column: "id" },
  // Stored lower-cased (docs/wire-contract.md §2), so exact matches lower-case the value too.
  email: { type: "lowercase", column: "email" },
  username: { type: "lowercase", column: "username" },
  name: { type: "string", column: "name" },
  role: { type: "string", column: "role" },
  banned: { type: "boolean", column: "banned" },
  emailVerified: { type: "boolean", column: "email_verified" },
  createdAt: { type: "date", column: "created_at" },
  updatedAt: { type: "date", column: "updated_at" },
};

export type Where = FilterQuery<IUser>;
/** A validated condition; each call builds it anew (MikroORM consumes a raw() fragment with the first query that uses it). */
export type Build = () => Where;

export type Direction = "asc" | "desc";
export type Order = Record<string, Direction>[];

export const reverse = (order: Order): Order =>
  order.map((o) => Object.fromEntries(Object.entries(o).map(([k, d]) => [k, d === "asc" ? "desc" : "asc"] as const)));

/** The columns of an order, with the direction each is read in. */
export const sortsOf = (order: Order) => order.map((o) => Object.entries(o)[0]! as [UserField, Direction]);

/**
 * Ids in the given order, read from the order's index alone (no user rows touched); with
 * `from`, starting at that user's place in the order (a row-value comparison on the order's
 * columns, answered by the same index).
 */
export async function idsInOrder(em: EntityManager, where: Build, order: Order, limit: number, offset: number, from?: string): Promise<string[]> {
  const sorts = sortsOf(order);
  const columns = (alias: string) => sorts.map(([field]) => `${alias}.${FIELDS[field].column}`).join(", ");
  const op = sorts[0]![1] === "asc" ? ">=" : "<=";
  const start = () => ({ [raw((alias: string) => `(${columns(alias)}) ${op} (select ${columns("a")} from users a where a.id = ?)`, [from])]: [] });
  const rows = await (em as SqlEntityManager)
    .createQueryBuilder(User, "u")
    .select("u.id")
    .where((from === undefined ? where() : { $and: [where(), start()] }) as never)
    .orderBy(order)
    .limit(limit)
    .offset(offset)
    .execute<{ id: string }[]>("all", false);
  return rows.map((r) => r.id);
}

/** The id of every `stride`-th user of the list (list-users.anchors.ts), by one scan of the order's index. */
export async function buildAnchors(em: EntityManager, where: Build, order: Order, stride: number): Promise<string[]> {
  const sqlEm = em as SqlEntityManager;
  const knex = sqlEm.getKnex();
  const sorts = sortsOf(order);
  // Directions come from the schema's enum, never from the caller's text.
  const window = knex.raw(`row_number() over (order by ${sorts.map(([, dir]) => `?? ${dir}`).join(", ")}) as rn`, sorts.map(([field]) => `u.${FIELDS[field].column}`));
  const numbered = sqlEm.createQueryBuilder(User, "u").select("u.id").where(where() as never).getKnexQuery().select(window);
  const query = knex.select("t.id").from(numbered.as("t")).whereRaw("t.rn % ? = 1", [stride]).orderBy("t.rn");
  const rows: { id: string }[] = await sqlEm.getConnection().execute(query);
  return rows.map((r) => r.id);
}

/**
 * A search's page and its total in one statement, the matches found first (PostgreSQL: the
 * pg_trgm index) and then sorted: rare matches are not hunted along the order's index (a
 * 0.2% name search walked 50,000 rows of users_created_at_id_index for a page of 100), and
 * the count comes from the same scan instead of a second one (PostgreSQL; null on SQLite). Taken
 * while the search's total is small enough to be counted on every page, or not known yet; a large total is remembered
 * (list-users.totals.ts) and its pages walk the order's index as other lists do. The matches
 * are read up to one more than maxRows: more (a common search: 4% of a million users)
 * answers null, and the page is then read as other lists are, the total counted beside it
 * (sorting 40,000 matches in memory cost more than walking the index for 100); so does a
 * page past the matches read (no row carries the total).
 */
export async function searchPage(em: EntityManager, dialect: Dialect, where: Build, order: Order, limit: number, offset: number, maxRows: number): Promise<{ ids: string[]; total: number } | null> {
  // SQLite has no trigram index: a scan either way, so the list is read as any other.
  if (dialect === "sqlite") return null;
  const sorts = sortsOf(order);
  const fields = new Set<UserField>(["id", ...sorts.map(([field]) => field)]);
  const sqlEm = em as SqlEntityManager;
  const matches = sqlEm
    .createQueryBuilder(User, "u")
    .select([...fields].map((field) => `u.${field}`))
    .where(where() as never)
    .limit(maxRows + 1)
    .getKnexQuery();
  const knex = sqlEm.getKnex();
  // MATERIALIZED: the planner may not fold the matches back into a walk of the order's index.
  const query = knex
    .withMaterialized("m", matches)
    .select("m.id", knex.raw("count(*) over () as total"))
    .from("m")
    .orderBy(sorts.map(([field, order]) => ({ column: `m.${FIELDS[field].column}`, order })))
    .limit(limit)
    .offset(offset);
  const rows: { id: string; total: string | number }[] = await sqlEm.getConnection().execute(query);
  // No row: past the last match, or past the matches read; either way the caller reads it as other lists.
  const total = rows.length ? Number(rows[0]!.total) : null;
  return total === null || total > maxRows ? null : { ids: rows.map((r) => r.id), total };
}

/**
 * The page's users by primary key, mapped straight from the rows: hydrating 100 entities
 * through the ORM cost more main-thread time (~3 ms) than both statements' round trips.
 */
export async function usersById(em: EntityManager, ids: string[]): Promise<Map<string, UserRow>> {
  if (ids.length === 0) return new Map();
  const sql = `select ${USER_COLUMNS} from users u where u.id in (${ids.map(() => "?").join(", ")})`;
  const rows: Record<string, unknown>[] = await em.getConnection().execute(sql, ids);
  // Each row's values in select order (the drivers build row objects column by column).
  return new Map(rows.map((r) => [r.u_id as string, mapUser(Object.values(r), 0, anyDate, anyBool)]));
}
