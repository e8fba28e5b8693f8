import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { Verification } from "../../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { inTransaction } from "../../db/transaction.ts";
import { CLOCK_TOLERANCE_SEC, unverifiedExpiry } from "../../social-providers/index.ts";

/**
 * The ID tokens that may never sign in (or link) again (docs/security.md): each presented one
 * once it has been accepted, and each one a provider issued to us in a code flow or a refresh
 * (get-access-token and refresh-token hand those to the account's user). One verification row
 * per token, keyed by its SHA-256 under the table's unique index, kept until the token expires
 * (the sweeper then deletes it with the other expired verifications); the token itself is never
 * stored. The purpose is not one a user holds: deleting a user leaves the ledger alone.
 */
const PURPOSE = "id-token-seen";
const ISSUED_TOKEN_RECORD_MAX_MS = 2 * 24 * 3600 * 1000;

function row(app: App, idToken: string, expiresAt: Date) {
  const now = app.clock.now();
  // Past exp, jose still accepts the token for its clock tolerance: remembered that long too.
  const until = new Date(expiresAt.getTime() + CLOCK_TOLERANCE_SEC * 1000);
  return { id: randomUUID(), identifier: sha256(idToken), purpose: PURPOSE, value: "", expiresAt: until, createdAt: now };
}

/**
 * A presented ID token's first use: the insert is the check, so of two requests racing with one
 * token exactly one gets true (the other hits the unique index). Its own statement, outside any
 * transaction: a refusal later in the sign-in does not give the token back.
 */
export async function spendIdToken(app: App, em: EntityManager, idToken: string, expiresAt: Date): Promise<boolean> {
  const insert = (target: EntityManager) => target.insert(Verification, row(app, idToken, expiresAt));
  try {
    // Inside a caller's transaction, a savepoint: PostgreSQL would otherwise abort it on a duplicate.
    await (em.isInTransaction() ? inTransaction(em, insert, { savepoint: true }) : insert(em));
    return true;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return false;
    throw err;
  }
}

/**
 * An id_token a provider's token endpoint gave us (callback, refresh): never to be accepted back.
 * Recorded before the flow goes on, so no path hands it out unrecorded. A token without a
 * readable `exp` is skipped: the presented-token check refuses it anyway.
 */
export async function rememberIssuedIdToken(app: App, em: EntityManager, idToken: string | null): Promise<void> {
  if (!idToken) return;
  const exp = unverifiedExpiry(idToken);
  if (!exp) return;
  // A token is accepted at most idTokenMaxAgeSec (a day at most) after its iat, and this one was
  // just issued: past two days it can never be accepted, whatever exp it names.
  const expiresAt = new Date(Math.min(exp.getTime(), app.clock.now().getTime() + ISSUED_TOKEN_RECORD_MAX_MS));
  // Already there (a provider that answers a refresh with the same id_token): nothing to add.
  await spendIdToken(app, em, idToken, expiresAt);
}

/**
 * A stored id_token about to leave the service (get-access-token, refresh-token): recorded first,
 * whatever stored it. The callback and the refresh record what they receive, but an account
 * imported from better-auth, or written before this ledger existed, holds id_tokens the ledger
 * never saw; handed to the user unrecorded, a fresh one would still sign in. Usually already
 * there: one indexed look-up, and the insert only when it is missing.
 */
export async function handOutIdToken(app: App, em: EntityManager, idToken: string | null): Promise<void> {
  if (!idToken) return;
  const known = await em.count(Verification, { identifier: sha256(idToken), purpose: PURPOSE });
  if (known === 0) await rememberIssuedIdToken(app, em, idToken);
}
