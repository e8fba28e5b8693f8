import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";

/** Base URL of the PostgreSQL server the suite's second run uses. */
export const POSTGRES_ADMIN_URL = process.env.PORTCULLIS_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";

export const testDialect: "sqlite" | "postgres" = process.env.PORTCULLIS_TEST_DB === "postgres" ? "postgres" : "sqlite";

export interface TestDatabase {
  url: string;
  drop(): Promise<void>;
}

/** A fresh database per call: a temp SQLite file, or a new PostgreSQL database. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `pc_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  if (testDialect === "sqlite") {
    const file = join(tmpdir(), `${name}.db`);
    return {
      url: `sqlite:${file}`,
      async drop() {
        for (const suffix of ["", "-wal", "-shm", ".migrate-lock"]) rmSync(`${file}${suffix}`, { force: true });
      },
    };
  }
  const admin = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    async drop() {
      const c = new pg.Client({ connectionString: POSTGRES_ADMIN_URL });
      await c.connect();
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await c.end();
    },
  };
}
