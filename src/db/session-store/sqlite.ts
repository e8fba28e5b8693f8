import Database from "better-sqlite3";
import { credentialSql, mapCredential, mapRow, SESSION_COLUMNS, type SessionStore, type SessionWithUser } from "./types.ts";

/**
 * A second, in-process connection to the same SQLite file (WAL: readers never wait for the
 * writer). Statements are prepared once; a lookup is ~12 µs (PERFORMANCE.md).
 */
export function createSqliteSessionStore(file: string): SessionStore {
  const db = new Database(file);
  db.pragma("journal_mode = wal");
  // Never wait synchronously on a lock: that would block the event loop, and the writer
  // (MikroORM, async) could not finish while we wait.
  db.pragma("busy_timeout = 0");
  const lookup = db.prepare(
    `SELECT ${SESSION_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`,
  );
  const credential = {
    email: db.prepare(credentialSql("email", "?")),
    username: db.prepare(credentialSql("username", "?")),
  };
  const extend = db.prepare(`UPDATE sessions SET expires_at = ?, updated_at = ? WHERE id = ?`);
  const date = (v: unknown) => new Date(v as number);
  const bool = (v: unknown) => v === 1 || v === true;

  return {
    findByTokenHash(tokenHash: string): SessionWithUser | null {
      const row = lookup.get(tokenHash) as Record<string, unknown> | undefined;
      return row ? mapRow(row, date, bool) : null;
    },
    async findCredential(field, value) {
      const row = credential[field].get(value) as Record<string, unknown> | undefined;
      return row ? mapCredential(row, date, bool) : null;
    },
    extend(sessionId, expiresAt, now) {
      try {
        extend.run(expiresAt.getTime(), now.getTime(), sessionId);
      } catch (err) {
        if ((err as { code?: string }).code !== "SQLITE_BUSY") throw err;
      }
    },
    async close() {
      db.close();
    },
  };
}
