import { randomBytes } from "node:crypto";
import { copyFileSync, existsSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { inject } from "vitest";

/** Base URL of the PostgreSQL server the suite's second run uses. */
export const POSTGRES_ADMIN_URL = process.env.PORTCULLIS_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export const testDialect: "sqlite" | "postgres" = process.env.PORTCULLIS_TEST_DB === "postgres" ? "postgres" : "sqlite";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** The run's migrated template (test/global-setup.ts): a SQLite file, or a PostgreSQL database and its pool table. */
export interface MigratedTemplate {
  name: string;
  /** PostgreSQL: the table in the admin database listing migrated databases free for reuse. */
  pool?: string;
  /** PostgreSQL: the template's SHAPE, which a database must still have to go back to the pool. */
  shape?: string;
}

/** One admin connection for `work` (the global setup's too), closed after it. */
export async function withAdmin<T>(work: (c: pg.Client) => Promise<T>, url = POSTGRES_ADMIN_URL): Promise<T> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    return await work(c);
  } finally {
    await c.end();
  }
}

function databaseUrl(name: string): string {
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return url.toString();
}

const newName = () => `pc_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;

/**
 * A fresh database per call: a temp SQLite file, or a new PostgreSQL database. Empty by default
 * (tests of migrating and starting up); `migrated: true` gives one with every migration applied
 * and no rows, what a test server starts from: a copy of the run's template on SQLite; on
 * PostgreSQL a database of the run's pool (emptied by the test that used it before) or else a
 * copy of the template. Creating and dropping a PostgreSQL database costs a second or more on a
 * loaded machine; emptying one, a few milliseconds.
 */
export async function createTestDatabase(opts: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const template = opts.migrated ? inject("migratedTemplate") : undefined;
  if (testDialect === "sqlite") {
    const file = join(tmpdir(), `${newName()}.db`);
    if (template && existsSync(template.name)) copyFileSync(template.name, file);
    return {
      url: `sqlite:${file}`,
      async drop() {
        for (const suffix of ["", "-wal", "-shm", ".migrate-lock"]) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  if (template?.pool) return pooledDatabase(template as Required<MigratedTemplate>);
  const name = newName();
  await withAdmin((c) => c.query(`CREATE DATABASE ${name}`));
  return { url: databaseUrl(name), drop: () => dropDatabase(name) };
}

async function dropDatabase(name: string): Promise<void> {
  await withAdmin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
}

async function pooledDatabase(template: Required<MigratedTemplate>): Promise<TestDatabase> {
  const name = await withAdmin(async (c) => {
    const taken = await c.query<{ name: string }>(`DELETE FROM ${template.pool} WHERE name = (SELECT name FROM ${template.pool} LIMIT 1 FOR UPDATE SKIP LOCKED) RETURNING name`);
    if (taken.rows[0]) return taken.rows[0].name;
    const created = newName();
    await c.query(`CREATE DATABASE ${created} TEMPLATE ${template.name}`);
    return created;
  });
  const url = databaseUrl(name);
  return {
    url,
    async drop() {
      // Back to the pool only as the template left it: the same tables, columns, indexes and
      // migrations (some tests drop or rename a table, or delete a migration's record), then no rows.
      const pooled = await withAdmin(async (admin) => {
        await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()", [name]);
        const clean = await withAdmin(async (db) => {
          if ((await databaseShape(db)) !== template.shape) return false;
          const tables = (await db.query<{ t: string }>("SELECT tablename AS t FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'mikro_orm_migrations'")).rows;
          // DELETE, not TRUNCATE: a truncate makes new files for every table and index (a second
          // on a loaded machine); the rows here are few. Replica role: no foreign-key order.
          await db.query(["SET session_replication_role = replica", ...tables.map((r) => `DELETE FROM "${r.t}"`)].join("; "));
          return true;
        }, url).catch(() => false);
        if (clean) await admin.query(`INSERT INTO ${template.pool} (name) VALUES ($1)`, [name]);
        return clean;
      });
      if (!pooled) await dropDatabase(name);
    },
  };
}

/** What a pooled database must still match: its tables, columns, indexes and applied migrations. */
export async function databaseShape(db: pg.Client): Promise<string> {
  return (await db.query<{ s: string }>(SHAPE)).rows[0]!.s;
}

// From the catalogs, not information_schema (ten times faster).
const SHAPE = `SELECT (SELECT string_agg(c.relname || '.' || a.attname || ':' || a.atttypid, ',' ORDER BY c.relname, a.attname)
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace JOIN pg_attribute a ON a.attrelid = c.oid
    WHERE n.nspname = 'public' AND a.attnum > 0 AND NOT a.attisdropped)
  || '|' || (SELECT string_agg(name, ',' ORDER BY name) FROM mikro_orm_migrations) AS s`;
