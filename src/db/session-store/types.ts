import type { MikroORM } from "@mikro-orm/core";
import type { MembershipLookup } from "./membership.ts";

/**
 * The hot-path port (docs/performance.md): one query prepared once per process, session joined to
 * user, and password sign-in's lookup and session insert. MikroORM stays off these paths; it
 * owns the schema and every other write.
 */
export interface UserRow {
  id: string;
  name: string;
  email: string;
  emailVerified: boolean;
  image: string | null;
  username: string | null;
  displayUsername: string | null;
  role: string;
  banned: boolean;
  banReason: string | null;
  banExpires: Date | null;
  twoFactorEnabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export interface SessionRow {
  id: string;
  userId: string;
  expiresAt: Date;
  rememberMe: boolean;
  ipAddress: string | null;
  userAgent: string | null;
  impersonatedBy: string | null;
  createdAt: Date;
  updatedAt: Date;
  /** The organization and team the session works in (docs/organizations.md). */
  activeOrganizationId: string | null;
  activeTeamId: string | null;
}

export interface SessionWithUser {
  session: SessionRow;
  user: UserRow;
  /** Set when the principal is an API key, not a session (core/session/api-key-principal.ts). */
  apiKey?: KeyPrincipal;
}

/** An API key as the hot path reads it (docs/machine-access.md "API keys"): what decides whether it authenticates and what a use costs. */
export interface KeyPrincipal {
  id: string;
  userId: string;
  enabled: boolean;
  expiresAt: Date | null;
  createdAt: Date;
  /** The per-key window (ms) and its maximum, when rate limiting applies to the key. */
  rateLimit: { windowMs: number; max: number } | null;
  /** `remaining` is counted (not null), with its refill when both refill fields are set. */
  quota: { refillAmount: number; refillIntervalMs: number } | { refillAmount: null; refillIntervalMs: null } | null;
}

export interface KeyWithUser {
  key: KeyPrincipal;
  user: UserRow;
}

export interface Credential {
  user: UserRow;
  /** argon2id hash of the credential account. */
  passwordHash: string;
}

/** An OAuth access token's row (db/session-store/access-token.ts), with its bound session's expiry (null: unbound or gone). */
export interface AccessTokenRow {
  id: string;
  clientId: string;
  userId: string | null;
  sessionId: string | null;
  scopes: string;
  resource: string | null;
  expiresAt: Date;
  revokedAt: Date | null;
  createdAt: Date;
  sessionExpiresAt: Date | null;
  claimsRequest: string | null; // the OIDC Core §5.5 `claims` request its grant started with (JSON)
}

/** `user` null: a client's own token (client credentials), or its user is gone. */
export interface AccessTokenWithUser {
  token: AccessTokenRow;
  user: UserRow | null;
}

/** A client credentials access token as written (no user, session, grant or resource); `tokenHash` the token's SHA-256. */
export type NewClientAccessToken = Pick<AccessTokenRow, "id" | "clientId" | "scopes" | "expiresAt" | "createdAt"> & { tokenHash: string };

/** A value now (SQLite answers synchronously: no promise on the hot path) or later. */
export type MaybePromise<T> = T | Promise<T>;

/** A session about to be written by password sign-in: its row, and the token's SHA-256 (never the token). */
export interface NewSessionRow extends SessionRow {
  tokenHash: string;
}

/** Sign-up's rows: the user, its credential account, and the session unless verification comes first. */
export interface SignUpRows {
  user: UserRow;
  account: { id: string; passwordHash: string };
  session: NewSessionRow | null;
}

/** A single-use token's row (a mailed link, an OAuth state, a passkey challenge). */
export interface VerificationRow {
  id: string;
  /** SHA-256 of the token. */
  identifier: string;
  purpose: string;
  value: string;
  expiresAt: Date;
  createdAt: Date;
}

/** An audit record (core/audit.ts's columns) written outside any transaction: a sign-in's outcome (core/sign-in-audit.ts). */
export interface AuditRow {
  id: string;
  actorId: string | null;
  action: string;
  targetType: string;
  targetId: string | null;
  ip: string | null;
  userAgent: string | null;
  metadata: string | null;
  createdAt: Date;
}

/** What password sign-in's insert did: wrote the session, or found the user banned at that moment, or gone. */
export type SignInInsert = "inserted" | "banned" | "gone";

export interface SessionStore extends MembershipLookup {
  findByTokenHash(tokenHash: string): MaybePromise<SessionWithUser | null>;
  /** An API key by the SHA-256 of the key, joined to its owner: one indexed lookup, prepared once. */
  findByApiKeyHash(keyHash: string): MaybePromise<KeyWithUser | null>;
  /** An OAuth access token by its SHA-256, with its bound session's expiry and its user: one indexed lookup, prepared once. */
  findByAccessTokenHash(tokenHash: string): MaybePromise<AccessTokenWithUser | null>;
  /** The store's own connection pool, when it has one (PostgreSQL): for GET /metrics. */
  poolStats?(): { total: number; idle: number; waiting: number };
  /** Password sign-in lookup: the user and its credential account's hash, one prepared query. */
  findCredential(field: "email" | "username", value: string): Promise<Credential | null>;
  /** Sliding expiry; best effort (a busy database skips it, the next request retries). */
  /**
   * `orm`: SQLite writes on the ORM's own connection, after any transaction it has open (a
   * commit from the reader connection would fail that transaction's next write).
   */
  extend(sessionId: string, expiresAt: Date, now: Date, orm: MikroORM): MaybePromise<void>;
  /**
   * Email sign-up's write, all or nothing, with statements prepared once: PostgreSQL one
   * statement (data-modifying CTEs), SQLite one transaction on the ORM's own connection. A taken
   * email or username fails it with the driver's unique violation (db/unique.ts maps it).
   */
  insertSignUp(rows: SignUpRows, orm: MikroORM): Promise<void>;
  /**
   * Password sign-in's one write: the session, inserted only if its user
   * exists and is not banned at `now` (an expired ban does not count), in one prepared
   * statement. On PostgreSQL it reads the user row FOR SHARE: a ban or a removal, which lock the
   * row before ending the user's sessions, either commits first and is seen, or waits for this
   * insert and then ends the session with the others. Nothing inserted: "banned" or "gone", told
   * apart by a second look on that path only. `orm`: on SQLite the write goes through the ORM's
   * connection, the file's one writer in this process (a commit from a second connection would
   * fail an open transaction of the ORM that has read: SQLITE_BUSY_SNAPSHOT).
   */
  insertSessionUnlessBanned(row: NewSessionRow, now: Date, orm: MikroORM): Promise<SignInInsert>;
  /**
   * A token's row, written outside any transaction. It only creates, so on SQLite it commits like
   * a session (synchronous = NORMAL): a power cut can lose it (the flow is started again), and
   * it does not hold the event loop for an fsync (0.25-0.6 ms here), which after a reset asked for
   * a known address, and only then, told it apart from an unknown one.
   */
  insertVerification(row: VerificationRow, orm: MikroORM): Promise<void>;
  /**
   * A sign-in's audit record, one prepared insert (a password sign-in's outcome is on the hot
   * path: the ORM's query building and, on SQLite, a FULL fsync would cost more than the rest).
   * Commits like a session (SQLite synchronous = NORMAL): a power cut may lose the last records.
   */
  insertAudit(row: AuditRow, orm: MikroORM): Promise<void>;
  /**
   * A client credentials access token, one prepared insert outside any transaction. Commits like
   * a session (SQLite synchronous = NORMAL): a power cut may lose it, and its client asks again.
   */
  insertClientAccessToken(row: NewClientAccessToken, orm: MikroORM): Promise<void>;
  close(): Promise<void>;
}

/** The user's 14 columns, in the order mapUser reads them. */
export const USER_COLUMNS = `
  u.id AS u_id, u.name AS u_name, u.email AS u_email, u.email_verified AS u_email_verified,
  u.image AS u_image, u.username AS u_username, u.display_username AS u_display_username,
  u.role AS u_role, u.banned AS u_banned, u.ban_reason AS u_ban_reason, u.ban_expires AS u_ban_expires,
  u.two_factor_enabled AS u_two_factor_enabled,
  u.created_at AS u_created_at, u.updated_at AS u_updated_at`;

/** The session's 11 columns, then the user's (mapRow's order). */
export const SESSION_COLUMNS = `
  s.id AS s_id, s.user_id AS s_user_id, s.expires_at AS s_expires_at, s.remember_me AS s_remember_me,
  s.ip_address AS s_ip_address, s.user_agent AS s_user_agent, s.impersonated_by AS s_impersonated_by,
  s.created_at AS s_created_at, s.updated_at AS s_updated_at,
  s.active_organization_id AS s_active_organization_id, s.active_team_id AS s_active_team_id, ${USER_COLUMNS}`;

/** `$1` / `?` placeholder for the looked-up value; `field` is a fixed column name, never input. */
export function credentialSql(field: "email" | "username", placeholder: string): string {
  return `SELECT ${USER_COLUMNS}, a.password AS a_password FROM users u
    JOIN accounts a ON a.user_id = u.id AND a.provider_id = 'credential'
    WHERE u.${field} = ${placeholder} AND a.password IS NOT NULL`;
}

/**
 * Rows arrive as arrays, in the order of the columns above (better-sqlite3's raw mode, pg's
 * `rowMode: "array"`): no object with 23 named keys per lookup (SQLite lookup 5.9 -> 3.7 µs).
 */
type Row = readonly unknown[];

type DateOf = (v: unknown) => Date;
type BoolOf = (v: unknown) => boolean;

/** Either driver's value as the ORM's connection returns it: pg a Date and a boolean, better-sqlite3 epoch ms and 0/1. */
export const anyDate: DateOf = (v) => (v instanceof Date ? v : new Date(v as number | string));
export const anyBool: BoolOf = (v) => v === true || v === 1;

/** The user whose USER_COLUMNS start at `at`. */
export function mapUser(r: Row, at: number, date: DateOf, bool: BoolOf): UserRow {
  const banExpires = r[at + 10];
  return {
    id: r[at] as string,
    name: r[at + 1] as string,
    email: r[at + 2] as string,
    emailVerified: bool(r[at + 3]),
    image: r[at + 4] as string | null,
    username: r[at + 5] as string | null,
    displayUsername: r[at + 6] as string | null,
    role: r[at + 7] as string,
    banned: bool(r[at + 8]),
    banReason: r[at + 9] as string | null,
    banExpires: banExpires == null ? null : date(banExpires),
    twoFactorEnabled: bool(r[at + 11]),
    createdAt: date(r[at + 12]),
    updatedAt: date(r[at + 13]),
  };
}

/** Maps a SESSION_COLUMNS row; `date` and `bool` adapt each driver's representation. */
export function mapRow(r: Row, date: DateOf, bool: BoolOf): SessionWithUser {
  return {
    session: {
      id: r[0] as string,
      userId: r[1] as string,
      expiresAt: date(r[2]),
      rememberMe: bool(r[3]),
      ipAddress: r[4] as string | null,
      userAgent: r[5] as string | null,
      impersonatedBy: r[6] as string | null,
      createdAt: date(r[7]),
      updatedAt: date(r[8]),
      activeOrganizationId: r[9] as string | null,
      activeTeamId: r[10] as string | null,
    },
    user: mapUser(r, 11, date, bool),
  };
}

/** Maps a credentialSql row: the user's columns, then the hash. */
export function mapCredential(r: Row, date: DateOf, bool: BoolOf): Credential {
  return { user: mapUser(r, 0, date, bool), passwordHash: r[14] as string };
}

/** The API key's 10 columns, then the user's (mapKeyRow's order). */
export const KEY_COLUMNS = `
  k.id AS k_id, k.user_id AS k_user_id, k.enabled AS k_enabled, k.expires_at AS k_expires_at, k.created_at AS k_created_at,
  k.rate_limit_enabled AS k_rate_limit_enabled, k.rate_limit_time_window AS k_rate_limit_time_window, k.rate_limit_max AS k_rate_limit_max,
  k.remaining AS k_remaining, k.refill_amount AS k_refill_amount, k.refill_interval AS k_refill_interval, ${USER_COLUMNS}`;

export const KEY_LOOKUP = `SELECT ${KEY_COLUMNS} FROM api_keys k JOIN users u ON u.id = k.user_id WHERE k.key_hash = `;

const num = (v: unknown): number | null => (v == null ? null : Number(v));

/** Maps a KEY_COLUMNS row (pg answers bigint columns as strings). */
export function mapKeyRow(r: Row, date: DateOf, bool: BoolOf): KeyWithUser {
  const [windowMs, max, refillAmount, refillIntervalMs] = [num(r[6]), num(r[7]), num(r[9]), num(r[10])];
  return {
    key: {
      id: r[0] as string,
      userId: r[1] as string,
      enabled: bool(r[2]),
      expiresAt: r[3] == null ? null : date(r[3]),
      createdAt: date(r[4]),
      rateLimit: bool(r[5]) && windowMs !== null && max !== null ? { windowMs, max } : null,
      quota: r[8] == null ? null : refillAmount !== null && refillIntervalMs !== null ? { refillAmount, refillIntervalMs } : { refillAmount: null, refillIntervalMs: null },
    },
    user: mapUser(r, 11, date, bool),
  };
}
