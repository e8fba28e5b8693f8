import { raw, type EntityManager, type FilterQuery } from "@mikro-orm/core";
import { User, type IUser } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { publicUser } from "../session/session.serialize.ts";
import { userRow } from "../user/user.mapper.ts";
import { LIMIT_DEFAULT, type FilterOperator, type ListUsersQuery, type UserField } from "./admin.schema.ts";
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

/**
 * Case-insensitive LIKE with an explicit escape character, the same on SQLite and PostgreSQL
 * (MikroORM's $like has no ESCAPE clause). The column comes from the whitelist, the value is bound.
 */
function like(field: UserField, op: "contains" | "starts_with" | "ends_with", value: Scalar): FilterQuery<IUser> {
  const { type, column } = FIELDS[field];
  if (type !== "string" && type !== "lowercase") throw invalid("filterOperator", `${op} needs a text field, not ${field}`);
  return { [raw((alias: string) => `lower(${alias}.${column}) like ? escape '\\'`, [likePattern(op, String(value))])]: [] };
}

function condition(field: UserField, op: FilterOperator, value: Scalar | Scalar[]): FilterQuery<IUser> {
  if (op === "contains" || op === "starts_with" || op === "ends_with") {
    if (Array.isArray(value)) throw invalid("filterValue", `${op} takes one value`);
    return like(field, op, value);
  }
  if (op === "in" || op === "not_in") {
    // Arrays through tRPC; a query string carries a comma-separated list.
    const list = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [value];
    const values = list.map((v) => coerce(field, typeof v === "string" ? v.trim() : v));
    return { [field]: op === "in" ? { $in: values } : { $nin: values } } as FilterQuery<IUser>;
  }
  if (Array.isArray(value)) throw invalid("filterValue", `${op} takes one value`);
  const v = coerce(field, value);
  if (FIELDS[field].type === "boolean" && op !== "eq" && op !== "ne") throw invalid("filterOperator", `${op} does not apply to ${field}`);
  const operator = { eq: "$eq", ne: "$ne", lt: "$lt", lte: "$lte", gt: "$gt", gte: "$gte" }[op];
  return { [field]: { [operator]: v } } as FilterQuery<IUser>;
}

/**
 * One query and one count, both in the database with the same filter (MikroORM findAndCount):
 * `total` never comes from loading users. Sorting always ends on id, so pages are stable.
 */
export async function listUsers(em: EntityManager, q: ListUsersQuery) {
  const conditions: FilterQuery<IUser>[] = [];
  if (q.searchValue) conditions.push(like(q.searchField ?? "email", q.searchOperator ?? "contains", q.searchValue));
  if (q.filterValue !== undefined) {
    conditions.push(condition(q.filterField ?? "email", q.filterOperator ?? "eq", q.filterValue));
  }
  const limit = q.limit ?? LIMIT_DEFAULT;
  const offset = q.offset ?? 0;
  const sortBy = q.sortBy ?? "createdAt";
  const direction = q.sortDirection ?? "asc";
  const orderBy = sortBy === "id" ? [{ id: direction }] : [{ [sortBy]: direction }, { id: "asc" as const }];
  const [users, total] = await em.findAndCount(User, conditions.length ? { $and: conditions } : {}, {
    orderBy: orderBy as never,
    limit,
    offset,
  });
  return { users: users.map((u) => publicUser(userRow(u))), total, limit, offset };
}
