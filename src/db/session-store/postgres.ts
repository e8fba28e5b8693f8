import pg from "pg";
import type { Logger } from "pino";
import { ACCESS_TOKEN_LOOKUP, CLIENT_ACCESS_TOKEN_INSERT, mapAccessTokenRow } from "./access-token.ts";
import { mapMembershipRow, MEMBERSHIP_LOOKUP, type MembershipRow } from "./membership.ts";
import { type AccessTokenWithUser, credentialSql, KEY_LOOKUP, mapCredential, mapKeyRow, mapRow, SESSION_COLUMNS, type KeyWithUser, type NewSessionRow, type SessionStore, type SessionWithUser, type SignInInsert } from "./types.ts";

/**
 * Password sign-in's insert: the session row (RFC 8176 `pwd`), for a user not banned at `$10`, whose row is read
 * FOR SHARE (a concurrent ban or removal holds it FOR UPDATE: this waits, then sees its outcome).
 */
const SIGN_IN_INSERT = `INSERT INTO sessions (id, token_hash, user_id, expires_at, remember_me, ip_address, user_agent, impersonated_by, created_at, updated_at, amr)
  SELECT $1::uuid, $2::varchar, u.id, $3::timestamptz, $4::boolean, $5::varchar, $6::text, NULL, $7::timestamptz, $8::timestamptz, 'pwd' FROM users u
  WHERE u.id = $9 AND NOT (u.banned AND (u.ban_expires IS NULL OR u.ban_expires > $10))
  FOR SHARE OF u`;

const SIGN_UP_USER_CTE = `WITH u AS (
    INSERT INTO users (id, email, email_verified, name, image, username, display_username, role, banned, ban_reason, ban_expires, two_factor_enabled, created_at, updated_at)
    VALUES ($1::uuid, $2::varchar, $3::boolean, $4::varchar, $5::text, $6::varchar, $7::varchar, $8::varchar, $9::boolean, $10::text, $11::timestamptz, $12::boolean, $13::timestamptz, $14::timestamptz)
    RETURNING id)`;
const SIGN_UP_ACCOUNT = `INSERT INTO accounts (id, user_id, provider_id, account_id, password, created_at, updated_at)
  SELECT $15::uuid, u.id, 'credential', u.id::text, $16::text, $13::timestamptz, $14::timestamptz FROM u`;
/** Sign-up in one statement: the user, its credential account, and (without verification first) its session. */
const SIGN_UP = `${SIGN_UP_USER_CTE}, a AS (${SIGN_UP_ACCOUNT})
  INSERT INTO sessions (id, token_hash, user_id, expires_at, remember_me, ip_address, user_agent, impersonated_by, created_at, updated_at, amr)
  SELECT $17::uuid, $18::varchar, u.id, $19::timestamptz, $20::boolean, $21::varchar, $22::text, NULL, $23::timestamptz, $24::timestamptz, 'pwd' FROM u`;
const SIGN_UP_NO_SESSION = `${SIGN_UP_USER_CTE} ${SIGN_UP_ACCOUNT}`;

let placeholder = 0;
const CLIENT_ACCESS_TOKEN_INSERT_PG = CLIENT_ACCESS_TOKEN_INSERT.replace(/\?/g, () => `$${++placeholder}`);

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
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async findByTokenHash(tokenHash: string): Promise<SessionWithUser | null> {
      const res = await pool.query({ name: "portcullis_session_lookup", text: lookupText, values: [tokenHash], rowMode: "array" });
      const row = res.rows[0] as unknown[] | undefined;
      return row ? mapRow(row, date, bool) : null;
    },
    async findByApiKeyHash(keyHash: string): Promise<KeyWithUser | null> {
      const res = await pool.query({ name: "portcullis_api_key_lookup", text: `${KEY_LOOKUP}$1`, values: [keyHash], rowMode: "array" });
      const row = res.rows[0] as unknown[] | undefined;
      return row ? mapKeyRow(row, date, bool) : null;
    },
    async findByAccessTokenHash(tokenHash: string): Promise<AccessTokenWithUser | null> {
      const res = await pool.query({ name: "portcullis_access_token_lookup", text: `${ACCESS_TOKEN_LOOKUP}$1`, values: [tokenHash], rowMode: "array" });
      const row = res.rows[0] as unknown[] | undefined;
      return row ? mapAccessTokenRow(row, date, bool) : null;
    },
    async findMembership(organizationId: string, userId: string): Promise<MembershipRow | null> {
      const res = await pool.query({ name: "portcullis_membership_lookup", text: `${MEMBERSHIP_LOOKUP}$1 AND user_id = $2`, values: [organizationId, userId], rowMode: "array" });
      const row = res.rows[0] as unknown[] | undefined;
      return row ? mapMembershipRow(row, date) : null;
    },
    async findCredential(field, value) {
      const res = await pool.query({ name: `portcullis_credential_${field}`, text: credentialSql(field, "$1"), values: [value], rowMode: "array" });
      const row = res.rows[0] as unknown[] | undefined;
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
    async insertSignUp({ user: u, account, session: s }) {
      const values: unknown[] = [
        u.id, u.email, u.emailVerified, u.name, u.image, u.username, u.displayUsername, u.role, u.banned, u.banReason, u.banExpires,
        u.twoFactorEnabled, u.createdAt, u.updatedAt, account.id, account.passwordHash,
      ];
      if (s) values.push(s.id, s.tokenHash, s.expiresAt, s.rememberMe, s.ipAddress, s.userAgent, s.createdAt, s.updatedAt);
      await pool.query(s ? { name: "portcullis_sign_up", text: SIGN_UP, values } : { name: "portcullis_sign_up_unverified", text: SIGN_UP_NO_SESSION, values });
    },
    async insertVerification(row) {
      await pool.query({
        name: "portcullis_verification",
        text: "INSERT INTO verifications (id, identifier, purpose, value, expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6)",
        values: [row.id, row.identifier, row.purpose, row.value, row.expiresAt, row.createdAt],
      });
    },
    async insertAudit(row) {
      await pool.query({
        name: "portcullis_audit",
        text: `INSERT INTO audit_events (id, actor_id, impersonator_id, action, target_type, target_id, ip, user_agent, metadata, created_at)
          VALUES ($1, $2, NULL, $3, $4, $5, $6, $7, $8, $9)`,
        values: [row.id, row.actorId, row.action, row.targetType, row.targetId, row.ip, row.userAgent, row.metadata, row.createdAt],
      });
    },
    async insertClientAccessToken(row) {
      await pool.query({
        name: "portcullis_client_access_token",
        text: CLIENT_ACCESS_TOKEN_INSERT_PG,
        values: [row.id, row.tokenHash, row.clientId, row.scopes, row.expiresAt, row.createdAt],
      });
    },
    async close() {
      await pool.end();
    },
  };
}
