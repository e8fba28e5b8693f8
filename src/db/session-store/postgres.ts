import pg from "pg";
import type { Logger } from "pino";
import { credentialSql, mapCredential, mapRow, SESSION_COLUMNS, type NewSessionRow, type SessionStore, type SessionWithUser, type SignInInsert } from "./types.ts";

/**
 * Password sign-in's insert: the session row, for a user not banned at `$10`, whose row is read
 * FOR SHARE (a concurrent ban or removal holds it FOR UPDATE: this waits, then sees its outcome).
 */
const SIGN_IN_INSERT = `INSERT INTO sessions (id, token_hash, user_id, expires_at, remember_me, ip_address, user_agent, impersonated_by, created_at, updated_at)
  SELECT $1::uuid, $2::varchar, u.id, $3::timestamptz, $4::boolean, $5::varchar, $6::text, NULL, $7::timestamptz, $8::timestamptz FROM users u
  WHERE u.id = $9 AND NOT (u.banned AND (u.ban_expires IS NULL OR u.ban_expires > $10))
  FOR SHARE OF u`;

/** Named prepared statements: PostgreSQL parses and plans them once per connection. */
export function createPostgresSessionStore(url: string, logger?: Logger): SessionStore {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  // An idle connection the server ends (restart, pg_terminate_backend, a dropped database): the
  // pool discards it and the next query opens another. Unhandled, it would end the process.
  pool.on("error", (err) => logger?.warn({ err }, "session store: an idle database connection failed"));
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
    async insertSessionUnlessBanned(row: NewSessionRow, now: Date): Promise<SignInInsert> {
      const res = await pool.query({
        name: "portcullis_sign_in_session",
        text: SIGN_IN_INSERT,
        values: [row.id, row.tokenHash, row.expiresAt, row.rememberMe, row.ipAddress, row.userAgent, row.createdAt, row.updatedAt, row.userId, now],
      });
      if (res.rowCount === 1) return "inserted";
      const user = await pool.query({ name: "portcullis_user_exists", text: "SELECT 1 FROM users WHERE id = $1", values: [row.userId] });
      return user.rowCount ? "banned" : "gone";
    },
    async close() {
      await pool.end();
    },
  };
}
