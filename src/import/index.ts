import type { EntityManager, MikroORM } from "@mikro-orm/core";
import { configuredSecrets, type ResolvedConfig } from "../config/index.ts";
import { createAead, keyringFromSecrets } from "../crypto/aead.ts";
import { inTransaction } from "../db/transaction.ts";
import { importTable, type TableRun } from "./engine.ts";
import { ImportError } from "./errors.ts";
import { openSource } from "./source.ts";
import { emptyTable, type ImportProgress, type ImportSummary } from "./summary.ts";
import { NOT_IMPORTED, TABLES } from "./tables.ts";

export { ImportError } from "./errors.ts";
export { importedId, IMPORT_NAMESPACE } from "./ids.ts";
export type { ImportProgress, ImportSummary, TableSummary, ImportedTable } from "./summary.ts";

export interface ImportOptions {
  /** The better-auth database: `sqlite:<file>`, a SQLite file path, or `postgres://…`. Only read. */
  from: string;
  /** Portcullis' resolved config: its secret seals provider tokens, its clock decides what has expired. */
  config: ResolvedConfig;
  /** An ORM open on `config.databaseUrl`, with migrations applied: where the rows go. */
  orm: MikroORM;
  /** Do everything in one transaction and roll it back: the summary says what a real run would do. */
  dryRun?: boolean;
  /** Called at the start of each table and after each batch. */
  onProgress?: (progress: ImportProgress) => void;
  /** Source rows per read and per transaction (default 500). */
  batchSize?: number;
}

/** Thrown inside the dry run's transaction to roll it back. */
class DryRunRollback extends Error {}

/**
 * Imports a better-auth 1.x database (its default schema: user, account, session, verification,
 * with the username, admin and two-factor plugins' columns when present) into Portcullis.
 * Idempotent: rows are keyed by ids derived from better-auth's (ids.ts), and a re-run skips every
 * row already there. Each batch commits on its own; a dry run holds one transaction and rolls it back.
 */
export async function importBetterAuth(options: ImportOptions): Promise<ImportSummary> {
  const started = Date.now();
  const { config, orm } = options;
  const secrets = configuredSecrets(config);
  if (secrets.length === 0) throw new ImportError("no service secret: provider tokens are sealed with it (set AUTH_SECRET, or secret in the config)");
  const batchSize = options.batchSize ?? 500;
  if (!Number.isInteger(batchSize) || batchSize < 1 || batchSize > 5000) throw new ImportError("batchSize must be an integer from 1 to 5000");
  const source = await openSource(options.from);
  try {
    if (!(await source.hasTable("user"))) throw new ImportError(`${source.label} has no "user" table: not a better-auth database (default schema)`);
    const summary: ImportSummary = {
      source: { dialect: source.dialect, label: source.label },
      dryRun: options.dryRun ?? false,
      tables: { user: emptyTable(), account: emptyTable(), session: emptyTable(), verification: emptyTable() },
      notImported: [],
      durationMs: 0,
    };
    const ctx = { config, aead: createAead(keyringFromSecrets(secrets)), now: config.clock.now() };
    const runAll = async (inBatch: TableRun["inBatch"]) => {
      for (const spec of TABLES) {
        if (!(await source.hasTable(spec.table))) continue;
        await importTable(spec, { source, ctx, batchSize, inBatch, onProgress: options.onProgress }, summary.tables[spec.table]);
      }
    };
    if (summary.dryRun) {
      await inTransaction(orm.em.fork(), async (outer: EntityManager) => {
        await runAll((cb) => cb(outer));
        throw new DryRunRollback();
      }).catch((err: unknown) => {
        if (!(err instanceof DryRunRollback)) throw err;
      });
    } else {
      await runAll((cb) => inTransaction(orm.em.fork(), cb));
    }
    for (const { table, reason } of NOT_IMPORTED) {
      if (!(await source.hasTable(table))) continue;
      const rows = await source.count(table);
      if (rows > 0) summary.notImported.push({ table, rows, reason });
    }
    summary.durationMs = Date.now() - started;
    return summary;
  } finally {
    await source.close();
  }
}
