import { raw } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User } from "../../db/entities/index.ts";
import { buildAnchors, FIELDS, idsInOrder, reverse, searchPage, usersById, type Build, type Direction, type Order, type UserField, type Where } from "../../db/user-list.ts";
import { AuthError } from "../../errors.ts";
import { isUuid, publicUser } from "../../core/index.ts";
import { LIMIT_DEFAULT, type FilterOperator, type ListUsersQuery } from "./admin.schema.ts";
import { ANCHORS_FROM, anchorCacheOf, STRIDE } from "./list-users.anchors.ts";
import { CACHE_FROM_ROWS, totalCacheOf } from "./list-users.totals.ts";

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
  if (rebuild) anchors.build(anchorKey, () => buildAnchors(app.orm.em.fork(), where, order, STRIDE));
  return ids;
}

/** The page by offset, counted from the nearer end of the list. */
async function idsByOffset(em: EntityManager, where: Build, order: Order, limit: number, offset: number, total: number, fromEnd: number): Promise<string[]> {
  if (offset <= fromEnd) return idsInOrder(em, where, order, limit, offset);
  return (await idsInOrder(em, where, reverse(order), Math.min(limit, total - offset), fromEnd)).reverse();
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
  // A search finds its matches by the trigram index where there is one (db/user-list.ts).
  const searched = total === undefined && q.searchValue ? await searchPage(em, app.dialect, where, order, limit, offset, CACHE_FROM_ROWS) : null;
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
