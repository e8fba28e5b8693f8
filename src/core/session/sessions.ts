import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { AuthError } from "../../errors.ts";
import { Session } from "../../db/entities/index.ts";
import type { MaybePromise, SessionRow, SessionWithUser, SignInInsert, UserRow } from "../../db/session-store/index.ts";
import type { SessionEntry } from "./cache.ts";

export interface RequestInfo {
  ip: string | null;
  userAgent: string | null;
  /** Set on a sign-in call (core/sign-in-audit.ts): the way in names the user it tried, when it knows one. */
  signInAttempt?: SignInAttempt;
}

/** What a sign-in's audit record learns on the way: the user tried (known once the identifier matched one). */
export interface SignInAttempt {
  userId: string | null;
}

export interface IssuedSession {
  /** The raw token: shown once, never stored. */
  token: string;
  session: SessionRow;
  /** Cookie Max-Age in seconds; null for a browser-session cookie (rememberMe: false). */
  cookieMaxAgeSec: number | null;
}

export interface IssueOptions {
  userId: string;
  rememberMe?: boolean;
  impersonatedBy?: string | null;
  expiresInSec?: number;
  /**
   * How the user was authenticated, as RFC 8176 `amr` values (docs/oidc-provider.md "acr and
   * amr"): `[]` when none applies (a social sign-in); absent when unknown (nothing is guessed).
   */
  amr?: readonly AuthMethod[];
}

/** The RFC 8176 values a session records: password, a one-time code or link, a passkey, two factors. */
export type AuthMethod = "pwd" | "otp" | "hwk" | "mfa";

export interface NewSession extends IssuedSession {
  /** SHA-256 of the token: the only form of it the database keeps. */
  tokenHash: string;
}

/** A new session, not written yet: its row, token and digest (issueSession writes it; so do writeSignUp and insertSessionUnlessBanned, sign-up's and password sign-in's one statement). */
export function newSession(app: App, req: RequestInfo, opts: IssueOptions): NewSession {
  const now = app.clock.now();
  const rememberMe = opts.rememberMe ?? true;
  const ttlSec =
    opts.expiresInSec ?? (rememberMe ? app.config.session.expiresInSec : app.config.session.shortExpiresInSec);
  const token = randomToken();
  const session: SessionRow = {
    id: randomUUID(),
    userId: opts.userId,
    expiresAt: new Date(now.getTime() + ttlSec * 1000),
    rememberMe,
    ipAddress: req.ip?.slice(0, 64) ?? null,
    userAgent: req.userAgent?.slice(0, 1024) ?? null,
    impersonatedBy: opts.impersonatedBy ?? null,
    createdAt: now,
    updatedAt: now,
    activeOrganizationId: null,
    activeTeamId: null,
  };
  return { token, tokenHash: sha256(token), session, cookieMaxAgeSec: rememberMe ? ttlSec : null };
}

/**
 * Writes a new session at once (inside the caller's transaction when `em` is one). A native
 * insert, not the unit of work: a third of the cost on the sign-in path (bench/README).
 */
export async function issueSession(app: App, em: EntityManager, req: RequestInfo, opts: IssueOptions): Promise<IssuedSession> {
  const { tokenHash, ...issued } = newSession(app, req, opts);
  const { userId, ...columns } = issued.session;
  await em.insert(Session, { ...columns, user: userId, tokenHash, amr: opts.amr ? opts.amr.join(" ") : null });
  return issued;
}

/**
 * Sign-up's one write (the session store's prepared statements, no ORM: its query building cost
 * more main-thread time than the rest of sign-up): the user, its credential account and, unless
 * verification comes first (null), the session newSession made.
 */
export function writeSignUp(app: App, user: UserRow, account: { id: string; passwordHash: string }, session: NewSession | null): Promise<void> {
  return app.sessions.insertSignUp({ user, account, session: session ? { ...session.session, tokenHash: session.tokenHash } : null }, app.orm);
}

/**
 * Password sign-in's one write: the session newSession made, inserted only if its user exists
 * and is not banned at `now` (session store: one prepared statement that reads the user row
 * FOR SHARE on PostgreSQL). Nothing inserted: "banned" or "gone".
 */
export function insertSessionUnlessBanned(app: App, issued: NewSession, now: Date): Promise<SignInInsert> {
  return app.sessions.insertSessionUnlessBanned({ ...issued.session, tokenHash: issued.tokenHash }, now, app.orm);
}

export interface ResolvedSession extends SessionWithUser {
  /** True when this request moved the sliding expiry (the cookie is re-sent). */
  extended: boolean;
  /** The get-session answer (and its JSON), serialized once per cache entry. */
  entry: SessionEntry;
}

/** The answer of every sign-in path to a banned user, with the operator's message (docs/wire-contract.md §3). */
export function bannedUser(app: App): AuthError {
  return new AuthError("BANNED_USER", { message: app.config.admin.bannedUserMessage });
}

export function isBanActive(user: { banned: boolean; banExpires: Date | null }, now: Date): boolean {
  return user.banned && (user.banExpires === null || user.banExpires.getTime() > now.getTime());
}

/**
 * The per-request session check: one prepared lookup, no write unless the sliding window moves
 * (docs/wire-contract.md §3: more than `updateAge` since the last extension, remember-me sessions only).
 * Synchronous when the answer is cached or the store answers at once (SQLite): no promise, no
 * microtask on the hot path.
 */
export function resolveSession(app: App, token: string): MaybePromise<ResolvedSession | null> {
  if (token.length < 20 || token.length > 200) return null;
  const digest = sha256(token);
  const now = app.clock.now();
  const cached = app.sessionCache.get(digest, now.getTime());
  // An API key's entry (api-key-principal.ts) is no session: a key sent as a session token names none.
  if (cached) return cached.value.apiKey ? null : settle(app, digest, token, cached, now);
  const generation = app.sessionCache.generation;
  const found = app.sessions.findByTokenHash(digest);
  const store = (row: SessionWithUser | null) =>
    row ? settle(app, digest, token, app.sessionCache.set(digest, row, now.getTime(), token, generation), now) : null;
  return found instanceof Promise ? found.then(store) : store(found);
}

function settle(app: App, digest: string, token: string, entry: SessionEntry, now: Date): MaybePromise<ResolvedSession | null> {
  const nowMs = now.getTime();
  const { session, user } = entry.value;
  if (session.expiresAt.getTime() <= nowMs || isBanActive(user, now)) {
    app.sessionCache.evictDigest(digest);
    return null;
  }
  const { expiresInSec, updateAgeSec } = app.config.session;
  const lastExtendedMs = session.expiresAt.getTime() - expiresInSec * 1000;
  if (!session.rememberMe || session.impersonatedBy || nowMs - lastExtendedMs <= updateAgeSec * 1000) {
    return { session, user, entry, extended: false };
  }
  const expiresAt = new Date(nowMs + expiresInSec * 1000);
  const generation = app.sessionCache.generation;
  const moved = (): ResolvedSession => {
    const next = app.sessionCache.set(digest, { user, session: { ...session, expiresAt, updatedAt: now } }, nowMs, token, generation);
    return { ...next.value, entry: next, extended: true };
  };
  const written = app.sessions.extend(session.id, expiresAt, now, app.orm);
  return written instanceof Promise ? written.then(moved) : moved();
}
