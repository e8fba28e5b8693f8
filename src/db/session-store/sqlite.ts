import Database from "better-sqlite3";
import type { AbstractSqlConnection } from "@mikro-orm/better-sqlite";
import type { MikroORM } from "@mikro-orm/core";
import { ACCESS_TOKEN_LOOKUP, CLIENT_ACCESS_TOKEN_INSERT, mapAccessTokenRow } from "./access-token.ts";
import { mapMembershipRow, MEMBERSHIP_LOOKUP, type MembershipRow } from "./membership.ts";
import { type AccessTokenWithUser, credentialSql, KEY_LOOKUP, mapCredential, mapKeyRow, mapRow, SESSION_COLUMNS, type KeyWithUser, type NewSessionRow, type SessionStore, type SignUpRows, type SessionWithUser, type SignInInsert } from "./types.ts";

/** Password sign-in's insert: the session row (authenticated by password: RFC 8176 `pwd`), for a user not banned at the given time (epoch ms). */
const SIGN_IN_INSERT = `INSERT INTO sessions (id, token_hash, user_id, expires_at, remember_me, ip_address, user_agent, impersonated_by, created_at, updated_at, amr)
  SELECT ?, ?, u.id, ?, ?, ?, ?, NULL, ?, ?, 'pwd' FROM users u
  WHERE u.id = ? AND NOT (u.banned AND (u.ban_expires IS NULL OR u.ban_expires > ?))`;

const SIGN_UP_USER = `INSERT INTO users (id, email, email_verified, name, image, username, display_username, role, banned, ban_reason, ban_expires, two_factor_enabled, created_at, updated_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const SIGN_UP_ACCOUNT = `INSERT INTO accounts (id, user_id, provider_id, account_id, password, created_at, updated_at) VALUES (?, ?, 'credential', ?, ?, ?, ?)`;
const SIGN_UP_SESSION = `INSERT INTO sessions (id, token_hash, user_id, expires_at, remember_me, ip_address, user_agent, impersonated_by, created_at, updated_at, amr)
  VALUES (?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, 'pwd')`;

const AUDIT_INSERT = `INSERT INTO audit_events (id, actor_id, impersonator_id, action, target_type, target_id, ip, user_agent, metadata, created_at)
  VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?, ?)`;

interface WriterStatements {
  insert: Database.Statement;
  userExists: Database.Statement;
  extend: Database.Statement;
  signUp: (rows: SignUpRows) => void;
  verification: Database.Statement;
  audit: Database.Statement;
  clientAccessToken: Database.Statement;
  /** Runs `write` with synchronous = NORMAL, then FULL again (see relaxed()). */
  relaxed: <T>(write: () => T) => T;
}

/**
 * The ORM's connection commits with synchronous = FULL (db/orm.ts): on disk before the answer.
 * The writes here only create (a session, an account) or extend a session: one lost to a power
 * cut is a sign-in to do again, never a revocation undone. They commit with NORMAL, which in WAL
 * mode keeps the commit's fsync off the event loop on the two hottest writes (sign-in and
 * sign-up ran at 0.88-0.90x raw argon2 before FULL existed; the target is 0.9x). WAL frames
 * reach the disk in order, so the next FULL commit syncs these with it.
 */
function relaxedWrites(connection: Database.Database): WriterStatements["relaxed"] {
  const normal = connection.prepare("PRAGMA synchronous = NORMAL");
  const full = connection.prepare("PRAGMA synchronous = FULL");
  return (write) => {
    normal.run();
    try {
      return write();
    } finally {
      full.run();
    }
  };
}

/** Prepared once per connection of the ORM's pool (SQLite's has one): keyed by the connection. */
const writerStatements = new WeakMap<Database.Database, WriterStatements>();

/** The part of knex's pool (tarn) read here: public methods only. */
interface PoolState {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
  numPendingCreates(): number;
}

/** The pool's connection, as last handed to withWriter: reused while it sits idle in the pool. */
const lastConnection = new WeakMap<object, Database.Database>();

/**
 * Runs `run` on the ORM's own SQLite connection, taken from its pool as the ORM's queries take
 * it: after any transaction of the ORM still open, never inside one.
 *
 * When nothing holds the pool's one connection and nothing waits for it, `run` (synchronous)
 * uses it without the acquire/release round: no other code can run before `run` returns, so
 * this is the same exclusive use, without the pool's pending operation, timeout and two
 * promise hops (~8% of a password sign-in's main-thread time). A connection the pool closed
 * (`open` false) is never reused; the pool's answer then comes from the slow path.
 */
async function withWriter<T>(orm: MikroORM, run: (statements: WriterStatements) => T): Promise<T> {
  const client = (orm.em.getConnection("write") as AbstractSqlConnection).getKnex().client;
  const pool = client.pool as PoolState | undefined;
  const idle = pool ? lastConnection.get(pool) : undefined;
  if (idle?.open && pool!.numUsed() === 0 && pool!.numFree() === 1 && pool!.numPendingAcquires() === 0 && pool!.numPendingCreates() === 0) {
    return run(statementsFor(idle));
  }
  const connection = (await client.acquireConnection()) as Database.Database;
  try {
    if (pool) lastConnection.set(pool, connection);
    return run(statementsFor(connection));
  } finally {
    await client.releaseConnection(connection);
  }
}

function statementsFor(connection: Database.Database): WriterStatements {
  let statements = writerStatements.get(connection);
  if (!statements) {
    statements = {
      insert: connection.prepare(SIGN_IN_INSERT),
      userExists: connection.prepare("SELECT 1 FROM users WHERE id = ?"),
      extend: connection.prepare("UPDATE sessions SET expires_at = ?, updated_at = ? WHERE id = ?"),
      signUp: signUpTransaction(connection),
      verification: connection.prepare("INSERT INTO verifications (id, identifier, purpose, value, expires_at, created_at) VALUES (?, ?, ?, ?, ?, ?)"),
      audit: connection.prepare(AUDIT_INSERT),
      clientAccessToken: connection.prepare(CLIENT_ACCESS_TOKEN_INSERT),
      relaxed: relaxedWrites(connection),
    };
    writerStatements.set(connection, statements);
  }
  return statements;
}

/** Sign-up's three inserts as one better-sqlite3 transaction (BEGIN … COMMIT, or ROLLBACK on a throw). */
function signUpTransaction(connection: Database.Database): (rows: SignUpRows) => void {
  const user = connection.prepare(SIGN_UP_USER);
  const account = connection.prepare(SIGN_UP_ACCOUNT);
  const session = connection.prepare(SIGN_UP_SESSION);
  const ms = (d: Date | null) => (d ? d.getTime() : null);
  return connection.transaction(({ user: u, account: a, session: s }: SignUpRows) => {
    user.run(u.id, u.email, u.emailVerified ? 1 : 0, u.name, u.image, u.username, u.displayUsername, u.role, u.banned ? 1 : 0, u.banReason, ms(u.banExpires), u.twoFactorEnabled ? 1 : 0, ms(u.createdAt), ms(u.updatedAt));
    account.run(a.id, u.id, u.id, a.passwordHash, ms(u.createdAt), ms(u.updatedAt));
    if (s) session.run(s.id, s.tokenHash, u.id, ms(s.expiresAt), s.rememberMe ? 1 : 0, s.ipAddress, s.userAgent, ms(s.createdAt), ms(s.updatedAt));
  });
}

/**
 * A second, in-process connection to the same SQLite file (WAL: readers never wait for the
 * writer). Statements are prepared once; a lookup is ~12 µs (docs/performance.md).
 */
export function createSqliteSessionStore(file: string): SessionStore {
  const db = new Database(file);
  db.pragma("journal_mode = wal");
  // Never wait synchronously on a lock: that would block the event loop, and the writer
  // (MikroORM, async) could not finish while we wait.
  db.pragma("busy_timeout = 0");
  const lookup = db.prepare(
    `SELECT ${SESSION_COLUMNS} FROM sessions s JOIN users u ON u.id = s.user_id WHERE s.token_hash = ?`,
  ).raw(true);
  const keyLookup = db.prepare(`${KEY_LOOKUP}?`).raw(true);
  const accessTokenLookup = db.prepare(`${ACCESS_TOKEN_LOOKUP}?`).raw(true);
  const membershipLookup = db.prepare(`${MEMBERSHIP_LOOKUP}? AND user_id = ?`).raw(true);
  const credential = {
    email: db.prepare(credentialSql("email", "?")).raw(true),
    username: db.prepare(credentialSql("username", "?")).raw(true),
  };
  const date = (v: unknown) => new Date(v as number);
  const bool = (v: unknown) => v === 1 || v === true;

  return {
    findByTokenHash(tokenHash: string): SessionWithUser | null {
      const row = lookup.get(tokenHash) as unknown[] | undefined;
      return row ? mapRow(row, date, bool) : null;
    },
    findByApiKeyHash(keyHash: string): KeyWithUser | null {
      const row = keyLookup.get(keyHash) as unknown[] | undefined;
      return row ? mapKeyRow(row, date, bool) : null;
    },
    findByAccessTokenHash(tokenHash: string): AccessTokenWithUser | null {
      const row = accessTokenLookup.get(tokenHash) as unknown[] | undefined;
      return row ? mapAccessTokenRow(row, date, bool) : null;
    },
    findMembership(organizationId: string, userId: string): MembershipRow | null {
      const row = membershipLookup.get(organizationId, userId) as unknown[] | undefined;
      return row ? mapMembershipRow(row, date) : null;
    },
    async findCredential(field, value) {
      const row = credential[field].get(value) as unknown[] | undefined;
      return row ? mapCredential(row, date, bool) : null;
    },
    // Rare (once per updateAge per session): the ORM's connection, so it never commits between
    // an open transaction's read and its write (SQLITE_BUSY_SNAPSHOT).
    extend(sessionId, expiresAt, now, orm) {
      return withWriter(orm, ({ extend, relaxed }) => {
        relaxed(() => extend.run(expiresAt.getTime(), now.getTime(), sessionId));
      });
    },
    insertSessionUnlessBanned(row: NewSessionRow, now: Date, orm: MikroORM): Promise<SignInInsert> {
      return withWriter(orm, ({ insert, userExists, relaxed }) => {
        const { changes } = relaxed(() => insert.run(
          row.id, row.tokenHash, row.expiresAt.getTime(), row.rememberMe ? 1 : 0, row.ipAddress, row.userAgent,
          row.createdAt.getTime(), row.updatedAt.getTime(), row.userId, now.getTime(),
        ));
        if (changes === 1) return "inserted";
        return userExists.get(row.userId) ? "banned" : "gone";
      });
    },
    insertSignUp(rows, orm) {
      return withWriter(orm, ({ signUp, relaxed }) => relaxed(() => signUp(rows)));
    },
    insertVerification(row, orm) {
      return withWriter(orm, ({ verification, relaxed }) => {
        relaxed(() => verification.run(row.id, row.identifier, row.purpose, row.value, row.expiresAt.getTime(), row.createdAt.getTime()));
      });
    },
    insertAudit(row, orm) {
      return withWriter(orm, ({ audit, relaxed }) => {
        relaxed(() => audit.run(row.id, row.actorId, row.action, row.targetType, row.targetId, row.ip, row.userAgent, row.metadata, row.createdAt.getTime()));
      });
    },
    insertClientAccessToken(row, orm) {
      return withWriter(orm, ({ clientAccessToken, relaxed }) => {
        relaxed(() => clientAccessToken.run(row.id, row.tokenHash, row.clientId, row.scopes, row.expiresAt.getTime(), row.createdAt.getTime()));
      });
    },
    async close() {
      db.close();
    },
  };
}
