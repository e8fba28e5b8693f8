import type { ListUsersQuery } from "../api.ts";

/**
 * The user list's state, kept in the address (`/admin/users?searchValue=…`) so that back, reload
 * and a shared link show the same page. list-users takes one search and one filter at a time.
 */
export interface ListState {
  searchValue: string;
  searchField: "email" | "name";
  searchOperator: "contains" | "starts_with" | "ends_with";
  filterField: "" | "role" | "banned" | "emailVerified";
  filterValue: string;
  sortBy: SortField;
  sortDirection: "asc" | "desc";
  limit: number;
  offset: number;
}

export const SORT_FIELDS = {
  createdAt: "Created",
  updatedAt: "Updated",
  email: "Email",
  name: "Name",
  role: "Role",
  banned: "Banned",
  emailVerified: "Email verified",
} as const;
export type SortField = keyof typeof SORT_FIELDS;

export const PAGE_SIZES = [10, 25, 50, 100] as const;

function oneOf<T extends string>(value: string | null, allowed: readonly T[], fallback: T): T {
  return value !== null && (allowed as readonly string[]).includes(value) ? (value as T) : fallback;
}

function whole(value: string | null, fallback: number, max: number): number {
  const n = value === null ? Number.NaN : Number(value);
  return Number.isInteger(n) && n >= 0 && n <= max ? n : fallback;
}

export function readState(query: URLSearchParams): ListState {
  return {
    searchValue: query.get("searchValue") ?? "",
    searchField: oneOf(query.get("searchField"), ["email", "name"], "email"),
    searchOperator: oneOf(query.get("searchOperator"), ["contains", "starts_with", "ends_with"], "contains"),
    filterField: oneOf(query.get("filterField"), ["", "role", "banned", "emailVerified"], ""),
    filterValue: query.get("filterValue") ?? "",
    sortBy: oneOf(query.get("sortBy"), Object.keys(SORT_FIELDS) as SortField[], "createdAt"),
    sortDirection: oneOf(query.get("sortDirection"), ["asc", "desc"], "desc"),
    limit: Number(oneOf(query.get("limit"), PAGE_SIZES.map(String), "25")),
    offset: whole(query.get("offset"), 0, 1_000_000_000),
  };
}

/** The address's query string for a state (defaults left out). */
export function writeState(s: ListState): Record<string, string | number | undefined> {
  return {
    searchValue: s.searchValue || undefined,
    searchField: s.searchValue ? s.searchField : undefined,
    searchOperator: s.searchValue && s.searchOperator !== "contains" ? s.searchOperator : undefined,
    filterField: s.filterField && s.filterValue !== "" ? s.filterField : undefined,
    filterValue: s.filterField && s.filterValue !== "" ? s.filterValue : undefined,
    sortBy: s.sortBy !== "createdAt" ? s.sortBy : undefined,
    sortDirection: s.sortDirection !== "desc" ? s.sortDirection : undefined,
    limit: s.limit !== 25 ? s.limit : undefined,
    offset: s.offset || undefined,
  };
}

/** The list-users input of a state. */
export function toInput(s: ListState): ListUsersQuery {
  const input: ListUsersQuery = { limit: s.limit, offset: s.offset, sortBy: s.sortBy, sortDirection: s.sortDirection };
  if (s.searchValue.trim()) {
    Object.assign(input, { searchValue: s.searchValue.trim(), searchField: s.searchField, searchOperator: s.searchOperator });
  }
  if (s.filterField && s.filterValue !== "") {
    const value = s.filterField === "role" ? s.filterValue.trim() : s.filterValue === "true";
    Object.assign(input, { filterField: s.filterField, filterValue: value, filterOperator: "eq" });
  }
  return input;
}
