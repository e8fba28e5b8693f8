import type { EntityManager } from "@mikro-orm/core";
import { LockMode } from "../db/mikro-orm.ts";
import { Account, User, type IUser } from "../db/entities/index.ts";
import { AuthError } from "../errors.ts";
import { isUuid } from "./ids.ts";
import { publicAccount } from "./session/view.ts";

/** A user by an id a caller gave (anything but a UUID names nobody). `lock`: FOR UPDATE on PostgreSQL, for a transaction that changes the user (SQLite has one writer). */
export async function findUser(em: EntityManager, id: string, lock = false): Promise<IUser | null> {
  return isUuid(id) ? em.findOne(User, { id }, lock ? { lockMode: LockMode.PESSIMISTIC_WRITE } : {}) : null;
}

/** findUser, or 404 USER_NOT_FOUND. */
export async function getUser(em: EntityManager, id: string, lock = false): Promise<IUser> {
  const user = await findUser(em, id, lock);
  if (!user) throw new AuthError("USER_NOT_FOUND");
  return user;
}

/** The user's linked accounts, oldest first, as listings show them (never a token or a hash). */
export async function listAccounts(em: EntityManager, userId: string) {
  const accounts = await em.find(Account, { user: userId }, { orderBy: { createdAt: "asc", id: "asc" } });
  return accounts.map(publicAccount);
}
