import { existsSync } from "node:fs";
import { resolve } from "node:path";
import type BetterSqlite from "better-sqlite3";
import type PgType from "pg";
import { loadPackage } from "../load.ts";
import { ImportError } from "./errors.ts";

/** One row as the driver gives it: SQLite has text dates and 0/1 booleans, PostgreSQL Date and boolean. */
export type SourceRow = Record<string, unknown>;

/** A better-auth database, read only: tables and columns as they are, rows in id order, a page at a time. */
export interface SourceDatabase {
  dialect: "sqlite" | "postgresql";
  /** The URL with any password masked, for the summary. */
  label: string;
  hasTable(table: string): Promise<boolean>;
  columns(table: string): Promise<Set<string>>;
  count(table: string): Promise<number>;
  /** Keyset paging on the primary key: rows with `id > afterId` (all with null), in id order. */
  page(table: string, columns: readonly string[], afterId: string | null, limit: number): Promise<SourceRow[]>;
  close(): Promise<void>;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/** `sqlite:<file>`, `file:<file>`, a path to an existing file, or `postgres(ql)://…`. */
export async function openSource(url: string): Promise<SourceDatabase> {
  if (/^postgres(ql)?:\/\//.test(url)) return openPostgres(url);
  const file = url.startsWith("sqlite:") ? url.slice(7) : url.startsWith("file:") ? url.slice(5) : url;
  if (!file || /^[a-z][a-z0-9+.-]*:\/\//i.test(file)) {
    throw new ImportError(`--from must be sqlite:<file>, a SQLite file or postgres://… (got ${maskUrl(url)})`);
  }
  const path = resolve(file);
  if (!existsSync(path)) throw new ImportError(`--from: no SQLite database at ${path}`);
  return openSqlite(path);
}

export function maskUrl(url: string): string {
  if (!URL.canParse(url)) return url;
  const u = new URL(url);
  if (u.password) u.password = "***";
  return u.toString();
}

function openSqlite(path: string): SourceDatabase {
  const Database = loadPackage("better-sqlite3") as typeof BetterSqlite;
  // Read-only: the import never writes to the database it moves away from.
  const db = new Database(path, { readonly: true, fileMustExist: true });
  return {
    dialect: "sqlite",
    label: `sqlite:${path}`,
    async hasTable(table) {
      return db.prepare("select 1 from sqlite_master where type = 'table' and name = ?").get(table) !== undefined;
    },
    async columns(table) {
      const rows = db.prepare(`pragma table_info(${quote(table)})`).all() as { name: string }[];
      return new Set(rows.map((r) => r.name));
    },
    async count(table) {
      return (db.prepare(`select count(*) as n from ${quote(table)}`).get() as { n: number }).n;
    },
    async page(table, columns, afterId, limit) {
      const cols = columns.map(quote).join(", ");
      const where = afterId === null ? "" : `where "id" > ?`;
      const sql = `select ${cols} from ${quote(table)} ${where} order by "id" limit ?`;
      const params = afterId === null ? [limit] : [afterId, limit];
      return db.prepare(sql).all(...params) as SourceRow[];
    },
    async close() {
      db.close();
    },
  };
}

async function openPostgres(url: string): Promise<SourceDatabase> {
  const pg = loadPackage("pg") as typeof PgType;
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
  } catch (err) {
    throw new ImportError(`--from: cannot connect to ${maskUrl(url)}: ${(err as Error).message}`);
  }
  // A read-only session: nothing the import runs can change the source.
  await client.query("set session characteristics as transaction read only");
  return {
    dialect: "postgresql",
    label: maskUrl(url),
    async hasTable(table) {
      const r = await client.query("select 1 from information_schema.tables where table_schema = current_schema() and table_name = $1", [table]);
      return (r.rowCount ?? 0) > 0;
    },
    async columns(table) {
      const r = await client.query<{ column_name: string }>(
        "select column_name from information_schema.columns where table_schema = current_schema() and table_name = $1",
        [table],
      );
      return new Set(r.rows.map((row) => row.column_name));
    },
    async count(table) {
      const r = await client.query<{ n: string }>(`select count(*) as n from ${quote(table)}`);
      return Number(r.rows[0]?.n ?? 0);
    },
    async page(table, columns, afterId, limit) {
      const cols = columns.map(quote).join(", ");
      const r =
        afterId === null
          ? await client.query(`select ${cols} from ${quote(table)} order by "id" limit $1`, [limit])
          : await client.query(`select ${cols} from ${quote(table)} where "id" > $1 order by "id" limit $2`, [afterId, limit]);
      return r.rows as SourceRow[];
    },
    async close() {
      await client.end();
    },
  };
}
