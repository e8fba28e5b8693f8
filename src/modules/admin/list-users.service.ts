import { raw } from "../../db/mikro-orm.ts";
import type { EntityManager, FilterQuery } from "@mikro-orm/core";
// Type only: the SQL entity manager both drivers (better-sqlite, postgresql) are built on.
import type { SqlEntityManager } from "@mikro-orm/knex";
import type { App } from "../../app.ts";
import { User, type IUser } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { publicUser } from "../../core/session/view.ts";
import { anyBool, anyDate, mapUser, USER_COLUMNS, type UserRow } from "../../db/session-store/index.ts";
import { LIMIT_DEFAULT, type FilterOperator, type ListUsersQuery, type UserField } from "./admin.schema.ts";
import { ANCHORS_FROM, anchorCacheOf, STRIDE } from "./list-users.anchors.ts";
import { CACHE_FROM_ROWS, totalCacheOf } from "./list-users.totals.ts";
import { isUuid } from "./sessions.service.ts";

type FieldType = "uuid" | "string" | "lowercase" | "boolean" | "date";

/** The whitelist (admin.schema.ts USER_FIELDS) with each field's type and column. */
const FIELDS: Record<UserField, { type: FieldType; column: string }> = {
  id: { type: "uuid", column: "id" },
  // Stored lower-cased (CONTRACT.md §2), so exact matches lower-case the value too.
  email: { type: "lowercase", column: "email" },
  username: { type: "lowercase", column: "username" },
  name: { type: "string", column: "name" },
  role: { type: "string", column: "role" },
  banned: { type: "boolean", column: "banned" },
  emailVerified: { type: "boolean", column: "email_verified" },
  createdAt: { type: "date", column: "created_at" },
  updatedAt: { type: "date", column: "updated_at" },
};

type Scalar = string | number | boolean;
type Value = string | boolean | Date;

function invalid(path: string, message: string): AuthError {
  return new AuthError("VALIDATION_ERROR", { message: `Invalid ${path}: ${message}`, issues: [{ path, message }] });
}

/** A caller's value as the column's type: booleans from "true"/"false", dates from ISO strings. */
function coerce(field: UserField, value: Scalar): Value {
  const { type } = FIELDS[field];
  if (type === "boolean") {
    if (value === true || value === "true") return true;
    if (value === false || value === "false") return false;
    throw invalid("filterValue", `must be true or false for ${field}`);
  }
  if (type === "date") {
    const date = typeof value === "boolean" ? null : new Date(value);
    if (!date || Number.isNaN(date.getTime())) throw invalid("filterValue", `must be an ISO date for ${field}`);
    return date;
  }
  const text = String(value);
  if (type === "uuid" && !isUuid(text)) throw invalid("filterValue", "must be a UUID for id");
  return type === "lowercase" || type === "uuid" ? text.toLowerCase() : text;
}

/** `\`, `%` and `_` match themselves: callers search for text, not LIKE patterns. */
function likePattern(op: "contains" | "starts_with" | "ends_with", value: string): string {
  const escaped = value.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`);
  return op === "starts_with" ? `${escaped}%` : op === "ends_with" ? `%${escaped}` : `%${escaped}%`;
}

type Where = FilterQuery<IUser>;
/** A validated condition; each call builds it anew (see filterOf). */
type Build = () => Where;

/**
 * Case-insensitive LIKE with an explicit escape character, the same on SQLite and PostgreSQL
 * (MikroORM's $like has no ESCAPE clause). The column comes from the whitelist, the value is
 * bound. `lower(column)` is what the search indexes hold (users_email_search_index,
 * users_name_search_index: pg_trgm GIN on PostgreSQL).
 */
function like(field: UserField, op: "contains" | "starts_with" | "ends_with", value: Scalar): Build {
  const { type, column } = FIELDS[field];
  if (type !== "string" && type !== "lowercase") throw invalid("filterOperator", `${op} needs a text field, not ${field}`);
  const pattern = likePattern(op, String(value));
  return () => ({ [raw((alias: string) => `lower(${alias}.${column}) like ? escape '\\'`, [pattern])]: [] });
}

function condition(field: UserField, op: FilterOperator, value: Scalar | Scalar[]): Build {
  if (op === "contains" || op === "starts_with" || op === "ends_with") {
    if (Array.isArray(value)) throw invalid("filterValue", `${op} takes one value`);
    return like(field, op, value);
  }
  if (op === "in" || op === "not_in") {
    // Arrays through tRPC; a query string carries a comma-separated list.
    const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [value];
    const values = list.map((v) => coerce(field, typeof v === "string" ? v.trim() : v));
    return () => ({ [field]: op === "in" ? { $in: values } : { $nin: values } }) as Where;
  }
  if (Array.isArray(value)) throw invalid("filterValue", `${op} takes one value`);
  const v = coerce(field, value);
  if (FIELDS[field].type === "boolean" && op !== "eq" && op !== "ne") throw invalid("filterOperator", `${op} does not apply to ${field}`);
  const operator = { eq: "$eq", ne: "$ne", lt: "$lt", lte: "$lte", gt: "$gt", gte: "$gte" }[op];
  return () => ({ [field]: { [operator]: v } }) as Where;
}

/**
 * The query's search and filter, validated now (VALIDATION_ERROR before any statement runs),
 * built afresh for every statement: MikroORM consumes a raw() fragment with the first query that
 * uses it, and one built but never run would stay in its registry.
 */
function filterOf(q: ListUsersQuery): Build {
  const parts: Build[] = [];
  if (q.searchValue) parts.push(like(q.searchField ?? "email", q.searchOperator ?? "contains", q.searchValue));
  if (q.filterValue !== undefined) parts.push(condition(q.filterField ?? "email", q.filterOperator ?? "eq", q.filterValue));
  return () => (parts.length ? { $and: parts.map((build) => build()) } : {});
}

type Direction = "asc" | "desc";
type Order = Record<string, Direction>[];

/** Identifies a filter for the total cache: the same search and filter give the same key. */
function filterKey(q: ListUsersQuery): string {
  const search = q.searchValue ? [q.searchField ?? "email", q.searchOperator ?? "contains", q.searchValue] : null;
  const filter = q.filterValue !== undefined ? [q.filterField ?? "email", q.filterOperator ?? "eq", q.filterValue] : null;
  return JSON.stringify([search, filter]);
}

/**
 * Every order ends on id in the sort's own direction, so each one is a single index
 * (users_<column>_id_index, the email and primary key indexes) read forwards or backwards, and
 * a descending list is exactly the ascending one reversed. Email is unique and never null: it
 * orders on its own.
 */
function orderOf(sortBy: UserField, direction: Direction): Order {
  if (sortBy === "id" || sortBy === "email") return [{ [sortBy]: direction }];
  return [{ [sortBy]: direction }, { id: direction }];
}

const reverse = (order: Order): Order =>
  order.map((o) => Object.fromEntries(Object.entries(o).map(([k, d]) => [k, d === "asc" ? "desc" : "asc"] as const)));

/** The columns of an order, with the direction each is read in. */
const sortsOf = (order: Order) => order.map((o) => Object.entries(o)[0]! as [UserField, Direction]);

/**
 * Ids in the given order, read from the order's index alone (no user rows touched); with
 * `from`, starting at that user's place in the order (a row-value comparison on the order's
 * columns, answered by the same index).
 */
async function idsInOrder(em: EntityManager, where: Build, order: Order, limit: number, offset: number, from?: string): Promise<string[]> {
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

/** The id of every STRIDE-th user of the list (list-users.anchors.ts), by one scan of the order's index. */
async function buildAnchors(em: EntityManager, where: Build, order: Order): Promise<string[]> {
  const sqlEm = em as SqlEntityManager;
  const knex = sqlEm.getKnex();
  const sorts = sortsOf(order);
  // Directions come from the schema's enum, never from the caller's text.
  const window = knex.raw(`row_number() over (order by ${sorts.map(([, dir]) => `?? ${dir}`).join(", ")}) as rn`, sorts.map(([field]) => `u.${FIELDS[field].column}`));
  const numbered = sqlEm.createQueryBuilder(User, "u").select("u.id").where(where() as never).getKnexQuery().select(window);
  const query = knex.select("t.id").from(numbered.as("t")).whereRaw("t.rn % ? = 1", [STRIDE]).orderBy("t.rn");
  const rows: { id: string }[] = await sqlEm.getConnection().execute(query);
  return rows.map((r) => r.id);
}

/**
 * A page's ids: by the index of the order (a deferred join: a deep offset skips index entries,
 * not rows; the users are read by primary key after). When the total is known, the page is read
 * from the nearer end of the list: offset 900,000 of 1,000,000 skips 99,900 entries backwards
 * instead of 900,000 forwards; and a page that would still skip more than ANCHORS_FROM entries
 * starts from the nearest keyset anchor (list-users.anchors.ts). It is the page of the list as
 * long as that total, which for a large list may be a few seconds old (list-users.totals.ts),
 * like the total it is answered with. username (nullable: no row-value order) is read by offset.
 */
async function pageIds(app: App, em: EntityManager, key: string, where: Build, order: Order, limit: number, offset: number, total?: number): Promise<string[]> {
  if (total === undefined) return idsInOrder(em, where, order, limit, offset);
  if (offset >= total) return [];
  const fromEnd = Math.max(0, total - offset - limit);
  if (Math.min(offset, fromEnd) <= ANCHORS_FROM || "username" in order[0]!) return idsByOffset(em, where, order, limit, offset, total, fromEnd);
  const anchors = anchorCacheOf(app);
  const anchorKey = `${key}|${JSON.stringify(order)}`;
  const anchor = anchors.at(anchorKey, offset);
  let ids: string[] | undefined;
  let rebuild = !anchor || anchor.stale;
  if (anchor) {
    ids = await idsInOrder(em, where, order, limit, anchor.skip, anchor.id);
    // Far from the end, a page is full; short, its anchor was removed since: read by offset.
    if (ids.length !== limit) {
      anchors.drop(anchorKey);
      [ids, rebuild] = [undefined, true];
    }
  }
  ids ??= await idsByOffset(em, where, order, limit, offset, total, fromEnd);
  // After this page's read: the scan never competes with the read that asked for it.
  if (rebuild) anchors.build(anchorKey, () => buildAnchors(app.orm.em.fork(), where, order));
  return ids;
}

/** The page by offset, counted from the nearer end of the list. */
async function idsByOffset(em: EntityManager, where: Build, order: Order, limit: number, offset: number, total: number, fromEnd: number): Promise<string[]> {
  if (offset <= fromEnd) return idsInOrder(em, where, order, limit, offset);
  return (await idsInOrder(em, where, reverse(order), Math.min(limit, total - offset), fromEnd)).reverse();
}

/**
 * A search's page and its total in one statement, the matches found first (PostgreSQL: the
 * pg_trgm index) and then sorted: rare matches are not hunted along the order's index (a
 * 0.2% name search walked 50,000 rows of users_created_at_id_index for a page of 100), and
 * the count comes from the same scan instead of a second one. Taken while the search's total
 * is small enough to be counted on every page, or not known yet; a large total is remembered
 * (list-users.totals.ts) and its pages walk the order's index as other lists do. The matches
 * are read up to one more than CACHE_FROM_ROWS: more (a common search: 4% of a million users)
 * answers null, and the page is then read as other lists are, the total counted beside it
 * (sorting 40,000 matches in memory cost more than walking the index for 100); so does a
 * page past the matches read (no row carries the total).
 */
async function searchPage(em: EntityManager, where: Build, order: Order, limit: number, offset: number): Promise<{ ids: string[]; total: number } | null> {
  const sorts = sortsOf(order);
  const fields = new Set<UserField>(["id", ...sorts.map(([field]) => field)]);
  const sqlEm = em as SqlEntityManager;
  const matches = sqlEm
    .createQueryBuilder(User, "u")
    .select([...fields].map((field) => `u.${field}`))
    .where(where() as never)
    .limit(CACHE_FROM_ROWS + 1)
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
  return total === null || total > CACHE_FROM_ROWS ? null : { ids: rows.map((r) => r.id), total };
}

/**
 * The page's users by primary key, mapped straight from the rows: hydrating 100 entities
 * through the ORM cost more main-thread time (~3 ms) than both statements' round trips.
 */
async function usersById(em: EntityManager, ids: string[]): Promise<Map<string, UserRow>> {
  if (ids.length === 0) return new Map();
  const sql = `select ${USER_COLUMNS} from users u where u.id in (${ids.map(() => "?").join(", ")})`;
  const rows: Record<string, unknown>[] = await em.getConnection().execute(sql, ids);
  // Each row's values in select order (the drivers build row objects column by column).
  return new Map(rows.map((r) => [r.u_id as string, mapUser(Object.values(r), 0, anyDate, anyBool)]));
}

/**
 * One page and its total, both from the database with the same filter: `total` never comes
 * from loading users, and a large one is counted once per filter for a few seconds
 * (list-users.totals.ts). Plain find/count/query-builder statements only: no findAndCount, no
 * transaction (both would switch on MikroORM's AsyncLocalStorage for the whole process).
 */
export async function listUsers(app: App, em: EntityManager, q: ListUsersQuery) {
  const where = filterOf(q);
  const limit = q.limit ?? LIMIT_DEFAULT;
  const offset = q.offset ?? 0;
  const order = orderOf(q.sortBy ?? "createdAt", q.sortDirection ?? "asc");
  const totals = totalCacheOf(app);
  const key = filterKey(q);
  const count = (on: EntityManager) => on.count(User, where());
  let total = totals.get(key, () => count(app.orm.em.fork()));
  let ids: string[];
  const countedAtMs = app.clock.now().getTime();
  // PostgreSQL: a search finds its matches by the trigram index (SQLite has none: a scan either way).
  const searched = total === undefined && q.searchValue && !app.config.databaseUrl.startsWith("sqlite:") ? await searchPage(em, where, order, limit, offset) : null;
  if (searched) {
    ids = searched.ids;
    total = searched.total;
    totals.put(key, total, countedAtMs);
  } else if (total === undefined) {
    [total, ids] = await Promise.all([count(em), pageIds(app, em, key, where, order, limit, offset)]);
    totals.put(key, total, countedAtMs);
  } else {
    ids = await pageIds(app, em, key, where, order, limit, offset, total);
  }
  const byId = await usersById(em, ids);
  // A user removed between the two reads is left out of this page.
  const users = ids.flatMap((id) => {
    const u = byId.get(id);
    return u ? [publicUser(u)] : [];
  });
  return { users, total, limit, offset };
}
