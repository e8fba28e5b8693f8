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

/**
 * The most an imported argon2 hash may cost to verify: every sign-in attempt at its address pays
 * it, so a row with m=4 GiB would turn each attempt into a denial of service (docs/security.md,
 * "Importing from better-auth"). Ours is m=19456, t=2, p=1; OWASP's strongest listed is m=47104.
 */
export const ARGON2_IMPORT_BOUNDS = { m: 65536, t: 10, p: 4 } as const;

/** Why an argon2 PHC string cannot be imported (unreadable or too costly), or null when it can. */
export function argon2Refusal(hash: string): string | null {
  const params = /^\$argon2(?:id|i|d)\$(?:v=\d+\$)?m=(\d{1,10}),t=(\d{1,10}),p=(\d{1,10})(?:,[^$]*)?\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/.exec(hash);
  if (!params) return "argon2 hash not in the PHC form $argon2id$v=19$m=..,t=..,p=..$salt$hash (the user can reset the password)";
  const [m, t, p] = params.slice(1).map(Number) as [number, number, number];
  const { m: maxM, t: maxT, p: maxP } = ARGON2_IMPORT_BOUNDS;
  if (m <= maxM && t <= maxT && p <= maxP) return null;
  return `argon2 cost above the import's bounds (m=${m} KiB, t=${t}, p=${p}; at most m=${maxM}, t=${maxT}, p=${maxP}): every sign-in would pay it (the user can reset the password)`;
}
