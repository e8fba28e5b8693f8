import { readdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Which database, and what ships for it: nothing here loads MikroORM (db/orm.ts does), so the
 * CLI can read them before the service's modules load (cli/early-migrate.ts, cli/startup-errors.ts).
 */

export type Dialect = "sqlite" | "postgresql";

export interface DatabaseTarget {
  dialect: Dialect;
  /** SQLite: absolute file path. PostgreSQL: connection URL. */
  location: string;
}

/** The migrations' folder, one subfolder per dialect. */
export const migrationsRoot = resolve(dirname(fileURLToPath(import.meta.url)), "migrations");

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith("sqlite:")) {
    return { dialect: "sqlite", location: resolve(url.slice("sqlite:".length)) };
  }
  return { dialect: "postgresql", location: url };
}

/** The migrations shipped for a dialect, by name: the files of its folder (.ts in the sources, .js in dist/). */
export function shippedMigrations(dialect: Dialect): string[] {
  return readdirSync(resolve(migrationsRoot, dialect))
    .filter((f) => /^Migration\w+\.(ts|js)$/.test(f) && !f.endsWith(".d.ts"))
    .map((f) => f.replace(/\.(ts|js)$/, ""))
    .sort();
}

/** Whether a shipped migration is missing from these applied names (as mikro_orm_migrations holds them). */
export function missingMigration(dialect: Dialect, applied: string[]): boolean {
  const done = new Set(applied.map((name) => name.replace(/\.(ts|js)$/, "")));
  return shippedMigrations(dialect).some((name) => !done.has(name));
}

/** The database could not be opened: unreachable, missing, refused, unwritable. `cause` is the driver's error. */
export class DatabaseUnavailableError extends Error {
  override name = "DatabaseUnavailableError";
  constructor(
    readonly target: DatabaseTarget,
    override readonly cause: unknown,
  ) {
    super(`cannot open the ${target.dialect} database: ${cause instanceof Error ? cause.message : String(cause)}`);
  }
}
