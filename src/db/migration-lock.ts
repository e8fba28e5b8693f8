import Database from "better-sqlite3";
import pg from "pg";
import type { DatabaseTarget } from "./target.ts";

/**
 * One migrator at a time per database, across processes: instances started together on a
 * fresh database would otherwise both see "nothing applied" and both run the first migration
 * (one of them then fails on a table that already exists).
 */

/** pg_advisory_lock key of the migrator: a fixed 64-bit number ("portcullis" + "migrate" in ASCII, folded). */
const PG_LOCK_KEY = "7022083722453819506";
/** How long an instance waits for another one's migrations before giving up. */
const LOCK_WAIT_MS = 5 * 60_000;

/**
 * PostgreSQL: a session-level advisory lock on a connection of its own, held while `run`
 * migrates on the ORM's pool; unlocked after (and released by the server if this process dies).
 */
async function withPostgresLock<T>(url: string, run: () => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`SET lock_timeout = ${LOCK_WAIT_MS}`);
    await client.query("SELECT pg_advisory_lock($1::bigint)", [PG_LOCK_KEY]);
    try {
      return await run();
    } finally {
      await client.query("SELECT pg_advisory_unlock($1::bigint)", [PG_LOCK_KEY]);
    }
  } finally {
    await client.end();
  }
}

/**
 * SQLite: an exclusive transaction on a lock file beside the database (`<file>.migrate-lock`),
 * waited for with a busy timeout. Not on the database itself: the ORM's own connection must
 * write the migrations, and an exclusive lock held by another connection of this process
 * would shut it out. SQLite's locks are the OS's file locks, so a process that dies lets go.
 */
async function withSqliteLock<T>(file: string, run: () => Promise<T>): Promise<T> {
  const lock = new Database(`${file}.migrate-lock`, { timeout: LOCK_WAIT_MS });
  try {
    // Rollback journal (not WAL) so that EXCLUSIVE really excludes every other connection.
    lock.pragma("journal_mode = delete");
    lock.exec("BEGIN EXCLUSIVE");
    try {
      return await run();
    } finally {
      lock.exec("COMMIT");
    }
  } finally {
    lock.close();
  }
}

export function withMigrationLock<T>(target: DatabaseTarget, run: () => Promise<T>): Promise<T> {
  return target.dialect === "postgresql" ? withPostgresLock(target.location, run) : withSqliteLock(target.location, run);
}
