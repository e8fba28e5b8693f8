/** What happened to one better-auth table. Reasons are counted, never carry a value (no emails or tokens). */
export interface TableSummary {
  /** Rows in the source table. */
  total: number;
  imported: number;
  /** Left alone on purpose: already imported (by id), expired, or nothing to map it to. */
  skipped: number;
  /** Could not be imported: invalid, colliding with another row in Portcullis, or its user missing. */
  failed: number;
  skippedReasons: Record<string, number>;
  failedReasons: Record<string, number>;
  /** Imported, with something adjusted (an unsafe image dropped, a username not valid here, …). */
  notes: Record<string, number>;
  /** The first failed rows by better-auth id, to look them up. */
  failures: { id: string; reason: string }[];
}

export type ImportedTable = "user" | "account" | "session" | "verification";

export interface ImportSummary {
  source: { dialect: "sqlite" | "postgresql"; label: string };
  dryRun: boolean;
  tables: Record<ImportedTable, TableSummary>;
  /** better-auth tables the import leaves behind, with their row counts and why. */
  notImported: { table: string; rows: number; reason: string }[];
  durationMs: number;
}

export interface ImportProgress {
  table: ImportedTable;
  /** Rows of the table handled so far (imported, skipped or failed). */
  done: number;
  total: number;
}

const MAX_FAILURES_LISTED = 20;

export function emptyTable(): TableSummary {
  return { total: 0, imported: 0, skipped: 0, failed: 0, skippedReasons: {}, failedReasons: {}, notes: {}, failures: [] };
}

export function tally(summary: TableSummary) {
  const bump = (map: Record<string, number>, reason: string) => (map[reason] = (map[reason] ?? 0) + 1);
  return {
    imported(notes: readonly string[] = []) {
      summary.imported++;
      for (const note of notes) bump(summary.notes, note);
    },
    skipped(reason: string) {
      summary.skipped++;
      bump(summary.skippedReasons, reason);
    },
    failed(id: string, reason: string) {
      summary.failed++;
      bump(summary.failedReasons, reason);
      if (summary.failures.length < MAX_FAILURES_LISTED) summary.failures.push({ id, reason });
    },
  };
}

export type Tally = ReturnType<typeof tally>;
