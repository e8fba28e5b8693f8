import { existsSync } from "node:fs";
import type BetterSqlite3 from "better-sqlite3";
import type PgType from "pg";
import { loadPackage } from "../load.ts";
import { missingMigration, type DatabaseTarget } from "../db/target.ts";

/**
 * Whether a shipped migration is missing, asked with the bare driver before the service's modules
 * load (MikroORM and the rest: ~0.35 s here). `serve` then starts its `migrate` process at once,
 * and the two load side by side instead of one after the other (cli/serve.ts). A fresh SQLite file
 * is known without opening it. `undefined` when the database does not answer: the regular path
 * opens it and names the problem.
 */
export async function pendingBeforeLoad(target: DatabaseTarget): Promise<boolean | undefined> {
  try {
    const applied = target.dialect === "sqlite" ? appliedSqlite(target.location) : await appliedPostgres(target.location);
    return applied === null || missingMigration(target.dialect, applied);
  } catch {
    return undefined;
  }
}

/** Names in mikro_orm_migrations; null when the database or that table does not exist yet. */
function appliedSqlite(file: string): string[] | null {
  if (!existsSync(file)) return null;
  const Database = loadPackage("better-sqlite3") as typeof BetterSqlite3;
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    if (!db.prepare("select 1 from sqlite_master where type = 'table' and name = 'mikro_orm_migrations'").get()) return null;
    return (db.prepare("select name from mikro_orm_migrations").all() as { name: string }[]).map((r) => r.name);
  } finally {
    db.close();
  }
}

async function appliedPostgres(url: string): Promise<string[] | null> {
  const { Client } = loadPackage("pg") as typeof PgType;
  const client = new Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    const table = await client.query<{ t: string | null }>("select to_regclass('mikro_orm_migrations')::text as t");
    if (!table.rows[0]?.t) return null;
    return (await client.query<{ name: string }>("select name from mikro_orm_migrations")).rows.map((r) => r.name);
  } finally {
    await client.end();
  }
}
