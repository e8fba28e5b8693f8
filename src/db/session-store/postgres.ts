import pg from "pg";
import { credentialSql, mapCredential, mapRow, SESSION_COLUMNS, type SessionStore, type SessionWithUser } from "./types.ts";

/** Named prepared statements: PostgreSQL parses and plans them once per connection. */
export function createPostgresSessionStore(url: string): SessionStore {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const lookupText = `SELECT ${SESSION_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = $1`;
  const date = (v: unknown) => (v instanceof Date ? v : new Date(v as string));
  const bool = (v: unknown) => v === true;

  return {
    async findByTokenHash(tokenHash: string): Promise<SessionWithUser | null> {
      const res = await pool.query({ name: "portcullis_session_lookup", text: lookupText, values: [tokenHash] });
      const row = res.rows[0] as Record<string, unknown> | undefined;
      return row ? mapRow(row, date, bool) : null;
    },
    async findCredential(field, value) {
      const res = await pool.query({ name: `portcullis_credential_${field}`, text: credentialSql(field, "$1"), values: [value] });
      const row = res.rows[0] as Record<string, unknown> | undefined;
      return row ? mapCredential(row, date, bool) : null;
    },
    async extend(sessionId, expiresAt, now) {
      await pool.query({
        name: "portcullis_session_extend",
        text: `UPDATE sessions SET expires_at = $1, updated_at = $2 WHERE id = $3`,
        values: [expiresAt, now, sessionId],
      });
    },
    async close() {
      await pool.end();
    },
  };
}
