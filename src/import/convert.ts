import type { SourceRow } from "./source.ts";

/**
 * Values as better-auth's adapters store them: Kysely on SQLite writes ISO-8601 text and 0/1,
 * PostgreSQL gives Date and boolean, Drizzle's integer timestamps are seconds or milliseconds.
 */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined || value === "") return null;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : value;
  if (typeof value === "number" || typeof value === "bigint" || (typeof value === "string" && /^\d+$/.test(value))) {
    const n = Number(value);
    // Below 10^11 a count of milliseconds would be 1973: it is seconds.
    return new Date(n < 1e11 ? n * 1000 : n);
  }
  if (typeof value === "string") {
    // SQLite's own CURRENT_TIMESTAMP form ("2026-11-25 10:00:00") is UTC without saying so.
    const text = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(\.\d+)?$/.test(value) ? `${value.replace(" ", "T")}Z` : value;
    const d = new Date(text);
    return Number.isNaN(d.getTime()) ? null : d;
  }
  return null;
}

export function toBool(value: unknown): boolean {
  return value === true || value === 1 || value === 1n || value === "1" || value === "true" || value === "t";
}

/** A text column: null for null, undefined (column absent) and "" (better-auth writes "" for an unknown IP). */
export function toText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  const text = typeof value === "string" ? value : String(value);
  return text === "" ? null : text;
}

/** The row's id as text (every better-auth table has a text primary key). */
export function rowId(row: SourceRow): string {
  return String(row.id);
}
