import { UniqueConstraintViolationException } from "../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import { BetterAuthImport } from "../db/entities/index.ts";
import { inTransaction } from "../db/transaction.ts";
import { rowId } from "./convert.ts";
import { ImportError } from "./errors.ts";
import type { SourceDatabase } from "./source.ts";
import { tally, type ImportProgress, type TableSummary, type Tally } from "./summary.ts";
import type { MapContext, TableSpec } from "./tables.ts";

type TargetRow = { id: string } & Record<string, unknown>;

export interface TableRun {
  source: SourceDatabase;
  ctx: MapContext;
  batchSize: number;
  /** Runs one batch's writes: its own transaction, or (dry run) the one transaction that is rolled back. */
  inBatch<T>(cb: (tx: EntityManager) => Promise<T>): Promise<T>;
  onProgress?: ((progress: ImportProgress) => void) | undefined;
}

/** Which of `ids` are rows of `entity` in Portcullis already. */
async function present(tx: EntityManager, entity: TableSpec["entity"], ids: string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = (await tx.find(entity, { id: { $in: ids } } as never, { fields: ["id"] as never, disableIdentityMap: true })) as { id: string }[];
  return new Set(rows.map((r) => r.id));
}

/** Which of `sourceIds` of `table` an earlier run imported (the ledger). */
async function ledgered(tx: EntityManager, table: string, sourceIds: string[]): Promise<Set<string>> {
  if (sourceIds.length === 0) return new Set();
  const rows = await tx.find(BetterAuthImport, { sourceTable: table, sourceId: { $in: sourceIds } }, { fields: ["sourceId"], disableIdentityMap: true });
  return new Set(rows.map((r) => r.sourceId));
}

/** The rows and their ledger entries, together (the caller's savepoint makes it all or nothing). */
async function insertWithLedger(tx: EntityManager, spec: TableSpec, rows: { sourceId: string; row: TargetRow }[], importedAt: Date): Promise<void> {
  await tx.insertMany(spec.entity, rows.map((c) => c.row) as never);
  await tx.insertMany(BetterAuthImport, rows.map((c) => ({ sourceTable: spec.table, sourceId: c.sourceId, importedAt })));
}

/** A failed insert in words that carry no value of the row: the constraint, or the driver's message without the SQL. */
function insertFailure(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof UniqueConstraintViolationException) {
    const constraint = /constraint "([^"]+)"/.exec(message)?.[1] ?? /UNIQUE constraint failed: ([\w., ]+)/.exec(message)?.[1];
    return `collides with a row already in Portcullis (${constraint ?? "unique key"})`;
  }
  return `insert failed: ${message.split(" - ").at(-1)!.slice(0, 200)}`;
}

async function writeBatch(spec: TableSpec, tx: EntityManager, page: ReturnType<SourceDatabase["page"]> extends Promise<infer R> ? R : never, run: TableRun, t: Tally) {
  const candidates: { sourceId: string; row: TargetRow; notes: string[] }[] = [];
  for (const source of page) {
    const mapped = spec.map(source, run.ctx);
    if ("skip" in mapped) t.skipped(mapped.skip);
    else if ("fail" in mapped) t.failed(rowId(source), mapped.fail);
    else candidates.push({ sourceId: rowId(source), row: mapped.row, notes: mapped.notes ?? [] });
  }
  // Idempotent: what an earlier run wrote is left as it is now (a password since changed stays
  // changed), and what it wrote that is gone since (a revoked session, a used link, a deleted
  // user) is not brought back: the ledger remembers it.
  const done = await present(tx, spec.entity, candidates.map((c) => c.row.id));
  const ledger = await ledgered(tx, spec.table, candidates.map((c) => c.sourceId));
  let todo = candidates.filter((c) => {
    if (done.has(c.row.id)) t.skipped("already imported");
    else if (ledger.has(c.sourceId)) t.skipped("imported before and removed in Portcullis since: not brought back");
    else if (c.sourceId.length > 255) t.failed(c.sourceId.slice(0, 64), "id longer than 255 characters");
    else return true;
    return false;
  });
  if (spec.userOf) {
    const userOf = spec.userOf;
    const users = await present(tx, "User", [...new Set(todo.map((c) => userOf(c.row)))]);
    todo = todo.filter((c) => {
      const ok = users.has(userOf(c.row));
      if (!ok) t.failed(c.sourceId, "its user is not in Portcullis (not imported)");
      return ok;
    });
  }
  if (todo.length === 0) return;
  const conflicts = await spec.conflicts(tx, todo.map((c) => c.row));
  todo = todo.filter((c) => {
    const reason = conflicts.get(c.row.id);
    if (reason) t.failed(c.sourceId, reason);
    return !reason;
  });
  if (todo.length === 0) return;
  try {
    // A savepoint: a failed statement must not abort the batch's transaction (PostgreSQL would).
    await inTransaction(tx, (sp) => insertWithLedger(sp, spec, todo, run.ctx.now), { savepoint: true });
    for (const c of todo) t.imported(c.notes);
  } catch {
    // Someone else wrote a colliding row meanwhile, or two rows of this batch collide: one by one.
    for (const c of todo) {
      try {
        await inTransaction(tx, (sp) => insertWithLedger(sp, spec, [c], run.ctx.now), { savepoint: true });
        t.imported(c.notes);
      } catch (err) {
        t.failed(c.sourceId, insertFailure(err));
      }
    }
  }
}

/** One table, a page at a time in id order: never more than `batchSize` source rows in memory. */
export async function importTable(spec: TableSpec, run: TableRun, summary: TableSummary): Promise<void> {
  const { source } = run;
  const columns = await source.columns(spec.table);
  const missing = spec.required.filter((c) => !columns.has(c));
  if (missing.length > 0) {
    throw new ImportError(`table "${spec.table}" has no column ${missing.map((c) => `"${c}"`).join(", ")}: not better-auth's default schema`);
  }
  const selected = [...spec.required, ...spec.optional.filter((c) => columns.has(c))];
  summary.total = await source.count(spec.table);
  const t = tally(summary);
  let done = 0;
  run.onProgress?.({ table: spec.table, done, total: summary.total });
  for (let after: string | null = null; ; ) {
    const page = await source.page(spec.table, selected, after, run.batchSize);
    if (page.length === 0) break;
    after = rowId(page.at(-1)!);
    await run.inBatch((tx) => writeBatch(spec, tx, page, run, t));
    done += page.length;
    run.onProgress?.({ table: spec.table, done, total: Math.max(summary.total, done) });
    if (page.length < run.batchSize) break;
  }
}
