import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import { Account } from "../db/entities/index.ts";

/** The password credential: an account of provider "credential" whose account id is its user's id. */
export const CREDENTIAL_PROVIDER = "credential";

/** The row of a password account. */
export function credentialAccount(userId: string, passwordHash: string, now: Date) {
  return {
    id: randomUUID(),
    user: userId,
    providerId: CREDENTIAL_PROVIDER,
    accountId: userId,
    password: passwordHash,
    createdAt: now,
    updatedAt: now,
  };
}

/**
 * Sets the user's password hash, creating the credential account of a user who has none (a
 * social-only user resetting, an admin setting one). Inside the caller's transaction; the caller
 * also calls core/holdings.ts `passwordChanged`. True when the account was created.
 */
export async function storePassword(tx: EntityManager, userId: string, passwordHash: string, now: Date): Promise<boolean> {
  const updated = await tx.nativeUpdate(Account, { user: userId, providerId: CREDENTIAL_PROVIDER }, { password: passwordHash, updatedAt: now });
  if (updated > 0) return false;
  await tx.insert(Account, credentialAccount(userId, passwordHash, now));
  return true;
}
