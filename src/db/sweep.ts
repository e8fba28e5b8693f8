import type { MikroORM } from "@mikro-orm/core";
import type { Dialect } from "./target.ts";

/** A table whose expired rows the sweeper deletes (src/modules/maintenance/sweeper.ts holds which, and when). */
export interface SweepTable {
  table: string;
  /** The expiry (or age) column; every swept table has an index on it. */
  column: string;
  /** Epoch milliseconds column (rate limits), or a datetime column. */
  epochMs?: boolean;
  /**
   * An expired row stays while this holds: SQL on the row (the table by its name), each `?` bound
   * to the cutoff. A spent authorization code, while tokens of its grant live (a replay revokes them).
   */
  keepWhile?: string;
}

/**
 * One bounded batch: at most `limit` expired rows, picked by the expiry index.
 * PostgreSQL: by physical row address (a TID scan, no second index lookup per row), skipping
 * rows another transaction holds (two sweeping instances never wait on each other, nor on a
 * request); the rows picked are locked by this statement until it deletes them.
 * SQLite: by rowid; one writer at a time, so nothing else can touch them in between.
 */
function batchSql({ table, column, keepWhile }: SweepTable, dialect: Dialect): string {
  const expired = `${column} < ?${keepWhile ? ` and not (${keepWhile})` : ""}`;
  return dialect === "sqlite"
    ? `delete from ${table} where rowid in (select rowid from ${table} where ${expired} limit ?)`
    : `delete from ${table} where ctid = any(array(select ctid from ${table} where ${expired} limit ? for update skip locked))`;
}

/** Deletes one batch of `target`'s rows older than `cutoffMs` (its own short transaction); the number deleted. */
export function sweeperOf(orm: MikroORM, dialect: Dialect) {
  const statements = new Map<string, string>();
  return async function deleteBatch(target: SweepTable, cutoffMs: number, limit: number): Promise<number> {
    let sql = statements.get(target.table);
    if (!sql) statements.set(target.table, (sql = batchSql(target, dialect)));
    // SQLite keeps datetimes as epoch ms; PostgreSQL compares a timestamptz with an ISO string.
    const cutoff = target.epochMs || dialect === "sqlite" ? cutoffMs : new Date(cutoffMs).toISOString();
    // The expiry's `?`, then keepWhile's.
    const cutoffs = Array<string | number>(1 + (target.keepWhile ? target.keepWhile.split("?").length - 1 : 0)).fill(cutoff);
    const res = await orm.em.getConnection().execute<{ affectedRows: number }>(sql, [...cutoffs, limit], "run");
    return res.affectedRows;
  };
}
