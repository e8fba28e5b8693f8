import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { randomToken, sha256 } from "../crypto/tokens.ts";
import { Verification, type IVerification } from "../db/entities/index.ts";
import type { MailRequest } from "../mail/mailer.ts";
import type { PreparedMail } from "./registry.ts";

/**
 * Single-use tokens mailed as links (email verification, password reset). The database keeps
 * only the SHA-256 of a token (docs/architecture.md style 6): a leaked table cannot be replayed.
 */
export type TokenPurpose =
  | "email-verification"
  | "password-reset"
  /** change-email of a verified user, step 1: the link mailed to the old address (docs/wire-contract.md §9). */
  | "change-email-confirmation"
  /** change-email, step 2: the link mailed to the new address; using it moves the email. */
  | "change-email-verification"
  /** delete-user without a fresh session or the password: the mailed confirmation. */
  | "delete-account";

/**
 * Every mailed link kind: each value starts with `{"userId":…}` (issueToken writes userId
 * first), so the links of one user are a prefix match (core/holdings.ts removes them). User ids
 * are UUIDs, so the pattern holds no LIKE wildcard, and a quote inside another JSON string is
 * escaped, so the key cannot be matched from a URL field.
 */
export const USER_TOKEN_PURPOSES: readonly TokenPurpose[] = [
  "email-verification",
  "password-reset",
  "change-email-confirmation",
  "change-email-verification",
  "delete-account",
];

/** The mailed links of one user, as a where clause on the value (see USER_TOKEN_PURPOSES). */
export const mailTokensOf = (userId: string) => ({ value: { $like: `{"userId":${JSON.stringify(userId)}%` } });

/** Every value starts with the user id, so "recently issued for this user" is a prefix match. */
export interface TokenValue {
  userId: string;
}

export interface IssuedToken {
  /** The raw token: goes into the link, never into the database. */
  token: string;
  id: string;
}

/**
 * THE single-use record (mailed links, OAuth state, passkey challenges): a row keyed by the
 * SHA-256 of a fresh 256-bit token, which only its holder (a link, a cookie) keeps.
 */
export async function storeVerification(app: App, em: EntityManager, purpose: string, value: string, ttlSec: number): Promise<IssuedToken> {
  const token = randomToken(32);
  const id = randomUUID();
  const now = app.clock.now();
  const row = { id, identifier: sha256(token), purpose, value, expiresAt: new Date(now.getTime() + ttlSec * 1000), createdAt: now };
  // Inside a transaction, with its other writes; otherwise the store's write (no fsync on SQLite).
  if (em.isInTransaction()) await em.insert(Verification, row);
  else await app.sessions.insertVerification(row, app.orm);
  return { token, id };
}

/**
 * Uses a record up and returns its value. Two requests racing with the same token may both read
 * the row; the single `DELETE ... WHERE identifier = ? AND expires_at > now` decides, and only the
 * caller whose delete removed the row gets the value. Inside a transaction the delete also rolls
 * back with the caller's other writes (a failed reset leaves its token usable).
 */
export async function consumeVerification(app: App, em: EntityManager, purpose: string, token: string): Promise<string | null> {
  if (token.length < 20 || token.length > 200) return null;
  const identifier = sha256(token);
  const row = await em.findOne(Verification, { identifier, purpose }, { disableIdentityMap: true });
  if (!row) return null;
  const deleted = await em.nativeDelete(Verification, { identifier, purpose, expiresAt: { $gt: app.clock.now() } });
  if (deleted !== 1) {
    // Expired (or lost the race): clear an expired leftover so the table does not keep it.
    await em.nativeDelete(Verification, { id: row.id, expiresAt: { $lte: app.clock.now() } });
    return null;
  }
  return row.value;
}

export function issueToken<V extends TokenValue>(app: App, em: EntityManager, purpose: TokenPurpose, value: V, ttlSec: number): Promise<IssuedToken> {
  const { userId, ...rest } = value;
  return storeVerification(app, em, purpose, JSON.stringify({ userId, ...rest }), ttlSec);
}

/** Which of `purposes` a token was issued for (a read: consumeToken still decides who uses it). */
export async function purposeOf<P extends string>(em: EntityManager, token: string, purposes: readonly P[]): Promise<P | null> {
  if (token.length < 20 || token.length > 200) return null;
  const row = await em.findOne(Verification, { identifier: sha256(token), purpose: { $in: [...purposes] } }, { fields: ["purpose"] });
  return (row?.purpose as P | undefined) ?? null;
}

/** The live row for a token, without using it up (the reset link's check before the form, the magic link's confirm page). */
export async function findLiveToken(app: App, em: EntityManager, purpose: string, token: string): Promise<IVerification | null> {
  if (token.length < 20 || token.length > 200) return null;
  const row = await em.findOne(Verification, { identifier: sha256(token), purpose });
  if (!row || row.expiresAt.getTime() <= app.clock.now().getTime()) return null;
  return row;
}

/** Uses a mailed token up (consumeVerification): its value, or null. */
export async function consumeToken<T extends TokenValue>(app: App, em: EntityManager, purpose: TokenPurpose, token: string): Promise<T | null> {
  const value = await consumeVerification(app, em, purpose, token);
  return value === null ? null : (JSON.parse(value) as T);
}

/** True when a live token of this purpose was issued for the user less than `withinSec` ago. */
export async function issuedRecently(app: App, em: EntityManager, purpose: TokenPurpose, userId: string, withinSec: number) {
  const now = app.clock.now();
  const count = await em.count(Verification, {
    purpose,
    ...mailTokensOf(userId),
    createdAt: { $gt: new Date(now.getTime() - withinSec * 1000) },
    expiresAt: { $gt: now },
  });
  return count > 0;
}

/**
 * After the response: `prepare` decides whether there is anything to send (unknown user,
 * verified address, throttled: null) and issues the token (or code); then the mail goes out. A
 * failed send is logged with the request id and its token row is deleted again (or its `undo`
 * runs), so no link or code that was never delivered stays valid.
 */
export function mailTokenLater(app: App, req: MailRequest, kind: string, prepare: (em: EntityManager) => Promise<PreparedMail | null>): void {
  const requestId = req.requestId ?? "-";
  app.mailer.later(async () => {
    const em = app.orm.em.fork();
    let prepared: PreparedMail | null = null;
    try {
      prepared = await prepare(em);
      if (!prepared) return;
      await app.mailer.send(prepared.message, req);
    } catch (err) {
      app.logger.error({ requestId, err, mail: kind }, "email not sent");
      const issuedId = prepared?.issued?.id;
      const undo = prepared?.undo ?? (issuedId ? (e: EntityManager) => e.nativeDelete(Verification, { id: issuedId }).then(() => undefined) : null);
      await undo?.(em).catch((cleanupErr: unknown) => {
        app.logger.error({ requestId, err: cleanupErr, mail: kind }, "could not delete the token of an unsent email");
      });
    }
  });
}
