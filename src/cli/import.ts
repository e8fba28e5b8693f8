import { resolveConfig } from "../config/index.ts";
import { migrateUp, openOrm, parseDatabaseUrl } from "../db/orm.ts";
import type { ImportProgress, ImportSummary } from "../import/index.ts";
import { withDevSecret } from "./dev-secret.ts";
import { loadConfig } from "./load-config.ts";
import { redactUrl, type ConfigSources } from "./sources.ts";
import { oneLine, StartupError } from "./startup-errors.ts";

/**
 * `portcullis import better-auth --from <url> [--dry-run]`: reads a better-auth database into the
 * configured one (src/import/), with a progress bar on stderr and the summary on stdout. Exit 1
 * when rows failed (the summary lists the first ones by their better-auth id).
 */

const BAR_WIDTH = 30;

/** A bar redrawn in place on a terminal; elsewhere (a pipe, CI) one line per finished table. */
function progressReporter(stream: NodeJS.WriteStream) {
  const finished = new Set<string>();
  return {
    update(p: ImportProgress) {
      if (finished.has(p.table)) return;
      const share = p.total === 0 ? 1 : Math.min(1, p.done / p.total);
      const filled = Math.round(share * BAR_WIDTH);
      const line = `${p.table.padEnd(12)} [${"#".repeat(filled)}${".".repeat(BAR_WIDTH - filled)}] ${p.done}/${p.total}`;
      const done = p.done >= p.total;
      if (done) finished.add(p.table);
      if (stream.isTTY) stream.write(`\r${line}${done ? "\n" : ""}`);
      else if (done) stream.write(`${line}\n`);
    },
  };
}

function counts(reasons: Record<string, number>): string {
  return Object.entries(reasons)
    .map(([reason, n]) => `${n} ${reason}`)
    .join(", ");
}

export function formatSummary(summary: ImportSummary): string[] {
  const out = [`${summary.dryRun ? "Dry run (nothing written): " : ""}better-auth ${summary.source.dialect} ${summary.source.label}`];
  for (const [table, t] of Object.entries(summary.tables)) {
    out.push(`  ${table.padEnd(12)} ${t.total} read, ${t.imported} imported, ${t.skipped} skipped, ${t.failed} failed`);
    if (t.skipped > 0) out.push(`    skipped: ${counts(t.skippedReasons)}`);
    if (t.failed > 0) out.push(`    failed: ${counts(t.failedReasons)}`);
    if (Object.keys(t.notes).length > 0) out.push(`    notes: ${counts(t.notes)}`);
    for (const f of t.failures) out.push(`    failed ${f.id}: ${f.reason}`);
  }
  for (const n of summary.notImported) out.push(`  not imported: ${n.table} (${n.rows} rows): ${n.reason}`);
  out.push(`  in ${(summary.durationMs / 1000).toFixed(1)} s`);
  return out;
}

export async function importCommand(opts: { from: string; dryRun?: boolean; batchSize?: string }, sources: ConfigSources): Promise<void> {
  const config = resolveConfig(withDevSecret(await loadConfig(sources), sources.env));
  const batchSize = opts.batchSize === undefined ? undefined : Number(opts.batchSize);
  const orm = await openOrm(parseDatabaseUrl(config.databaseUrl));
  try {
    await migrateUp(orm); // the import's ledger (better_auth_imports) is a table of ours
    const { importBetterAuth, ImportError } = await import("../import/index.ts");
    const progress = progressReporter(process.stderr);
    let summary: ImportSummary;
    try {
      summary = await importBetterAuth({ from: opts.from, config, orm, dryRun: opts.dryRun ?? false, onProgress: (p) => progress.update(p), ...(batchSize === undefined ? {} : { batchSize }) });
    } catch (err) {
      if (err instanceof ImportError) throw new StartupError([`portcullis import better-auth: ${oneLine(err.message)}.`]);
      const message = err instanceof Error ? err.message : String(err);
      throw new StartupError([`portcullis import better-auth: cannot read ${redactUrl(opts.from)}: ${oneLine(message)}.`]);
    }
    for (const line of formatSummary(summary)) console.log(line);
    const failed = Object.values(summary.tables).reduce((n, t) => n + t.failed, 0);
    if (failed > 0) {
      console.error(`portcullis import better-auth: ${failed} rows failed (listed above by their better-auth id); the rest ${summary.dryRun ? "would be" : "is"} imported.`);
      process.exitCode = 1;
    }
  } finally {
    await orm.close();
  }
}
