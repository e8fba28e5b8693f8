import { LockMode } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { hashPassword } from "../../crypto/password.ts";
import { Account, User, type IUser } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { mapUniqueViolation } from "../../db/unique.ts";
import { AuthError } from "../../errors.ts";
import { type Actor, addressChanged, type AuditAction, checkPasswordLength, credentialAccount, deleteUserAndEverything, endImpersonationsBy, endSessionsOf, getUser, hasPermission, isUuid, newUserRow, parseEmail, parseUsername, passwordChanged, recordAudit, storePassword, userChanged } from "../../core/index.ts";
import type { UpdateUserData } from "./admin.schema.ts";

/** `"a,b"` or `["a", "b"]` → `"a,b"`; every name must be a configured role (better-auth's rule). */
export function parseRoles(app: App, value: string | string[]): string {
  const names = (Array.isArray(value) ? value : value.split(",")).map((r) => r.trim()).filter(Boolean);
  const unique = [...new Set(names)];
  if (unique.length === 0 || unique.some((r) => !Object.hasOwn(app.config.admin.roles, r))) {
    throw new AuthError("YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE");
  }
  return unique.join(",");
}

export interface CreateUserInput {
  email: string;
  password?: string | undefined;
  name: string;
  role?: string | string[] | undefined;
  data?:
    | { emailVerified?: boolean | undefined; image?: string | null | undefined; username?: string | undefined; displayUsername?: string | undefined; role?: string | string[] | undefined }
    | undefined;
}

/** With a password, also a credential account (argon2id); without, a user for other sign-in methods. */
export async function createUser(app: App, em: EntityManager, actor: Actor, input: CreateUserInput): Promise<IUser> {
  const email = parseEmail(input.email);
  const requested = input.role ?? input.data?.role;
  const role = requested === undefined ? app.config.admin.defaultRole : parseRoles(app, requested);
  const username = input.data?.username === undefined ? null : parseUsername(input.data.username);
  if (input.password !== undefined) checkPasswordLength(app.config, input.password);
  const passwordHash = input.password === undefined ? null : await hashPassword(input.password);
  const now = app.clock.now();
  const user = newUserRow(
    {
      email,
      emailVerified: input.data?.emailVerified ?? false,
      name: input.name,
      image: input.data?.image ?? null,
      username,
      displayUsername: input.data?.displayUsername ?? input.data?.username,
      role,
    },
    now,
  );
  await mapUniqueViolation(() =>
    inTransaction(em, async (tx) => {
      await tx.insert(User, user); // the user row before its account's foreign key
      if (passwordHash) await tx.insert(Account, credentialAccount(user.id, passwordHash, now));
      await recordAudit(tx, app.clock, actor, {
        action: "create-user",
        targetType: "user",
        targetId: user.id,
        metadata: { email, role, withPassword: passwordHash !== null },
      });
    }),
  );
  return user;
}

/** What a change to a user writes: the columns (`updatedAt` is added) and the audit record's details. */
export interface UserChange {
  set: Partial<Omit<IUser, "id" | "createdAt" | "updatedAt">>;
  metadata: Record<string, unknown>;
}

/**
 * Loads the user, applies `change` and records `action` (with the change's metadata), all in
 * one transaction; the user's cached sessions go (core/session/revoke.ts userChanged). Returns
 * the changed user.
 */
export async function changeUser(
  app: App,
  em: EntityManager,
  actor: Actor,
  userId: string,
  action: AuditAction,
  change: (user: IUser, tx: EntityManager) => Promise<UserChange> | UserChange,
): Promise<IUser> {
  return mapUniqueViolation(() =>
    inTransaction(em, async (tx) => {
      // Locked first: a sign-in inserting a session waits for this change (ban) to commit, or
      // commits first and then sees its session ended (email-password.service). Read outside
      // the identity map: the row is a value here, the change is written by the update below.
      const user = isUuid(userId) ? await tx.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE, disableIdentityMap: true }) : null;
      if (!user) throw new AuthError("USER_NOT_FOUND");
      const { set, metadata } = await change(user, tx);
      const updatedAt = app.clock.now();
      await tx.nativeUpdate(User, { id: userId }, { ...set, updatedAt });
      await recordAudit(tx, app.clock, actor, { action, targetType: "user", targetId: userId, metadata });
      userChanged(app, tx, userId);
      return Object.assign(user, set, { updatedAt });
    }),
  );
}

/** An admin who loses `user: ["impersonate"]` stops impersonating at once: their impersonation sessions end. */
async function endLostImpersonations(app: App, tx: EntityManager, user: { id: string; role: string }): Promise<void> {
  if (!hasPermission(app.config.admin, user, { user: ["impersonate"] })) await endImpersonationsBy(app, tx, user.id);
}

export function setRole(app: App, em: EntityManager, actor: Actor, userId: string, value: string | string[]) {
  const role = parseRoles(app, value);
  return changeUser(app, em, actor, userId, "set-role", async (user, tx) => {
    await endLostImpersonations(app, tx, { id: user.id, role });
    return { set: { role }, metadata: { role, previous: user.role } };
  });
}

/** The caller has checked each field group's permission (admin.router.ts). */
export async function updateUser(app: App, em: EntityManager, actor: Actor, userId: string, data: UpdateUserData) {
  if (Object.keys(data).length === 0) throw new AuthError("NO_DATA_TO_UPDATE");
  if (data.password !== undefined) throw new AuthError("PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER");
  if (data.banned === true && userId === actor.userId) throw new AuthError("YOU_CANNOT_BAN_YOURSELF");
  const changes: UserChange["set"] = {};
  if (data.name !== undefined) changes.name = data.name;
  if (data.image !== undefined) changes.image = data.image;
  if (data.email !== undefined) changes.email = parseEmail(data.email);
  if (data.emailVerified !== undefined) changes.emailVerified = data.emailVerified;
  if (data.role !== undefined) changes.role = parseRoles(app, data.role);
  if (data.username !== undefined) {
    changes.username = data.username === null ? null : parseUsername(data.username);
    changes.displayUsername = data.username === null ? null : (data.displayUsername ?? data.username);
  } else if (data.displayUsername !== undefined) {
    changes.displayUsername = data.displayUsername;
  }
  if (data.banned !== undefined) changes.banned = data.banned;
  if (data.banReason !== undefined) changes.banReason = data.banReason;
  if (data.banExpires !== undefined) changes.banExpires = data.banExpires === null ? null : new Date(data.banExpires);
  return changeUser(app, em, actor, userId, "update-user", async (user, tx) => {
    // A ban through update-user ends sessions like ban-user does.
    if (data.banned === true) await endSessionsOf(app, tx, userId);
    else if (changes.role !== undefined) await endLostImpersonations(app, tx, { id: user.id, role: changes.role });
    if (changes.email !== undefined && changes.email !== user.email) await addressChanged(tx, userId);
    return { set: changes, metadata: { fields: Object.keys(changes) } };
  });
}

/** Sets (or creates) the credential password; length rules as sign-up, argon2id. The user's sessions stay (better-auth). */
export async function setUserPassword(app: App, em: EntityManager, actor: Actor, userId: string, newPassword: string) {
  checkPasswordLength(app.config, newPassword);
  await getUser(em, userId);
  const passwordHash = await hashPassword(newPassword);
  const now = app.clock.now();
  await inTransaction(em, async (tx) => {
    const created = await storePassword(tx, userId, passwordHash, now);
    await passwordChanged(app, tx, userId);
    await recordAudit(tx, app.clock, actor, { action: "set-user-password", targetType: "user", targetId: userId, metadata: { created } });
    userChanged(app, tx, userId);
  });
}

/** Deletes the user; sessions and accounts go with it (explicitly, and by the foreign keys' cascade). */
export async function removeUser(app: App, em: EntityManager, actor: Actor, userId: string): Promise<void> {
  if (userId === actor.userId) throw new AuthError("YOU_CANNOT_REMOVE_YOURSELF");
  const user = await getUser(em, userId);
  await inTransaction(em, async (tx) => {
    // Removed by a concurrent request: one audit record.
    if (!(await deleteUserAndEverything(app, tx, userId))) throw new AuthError("USER_NOT_FOUND");
    await recordAudit(tx, app.clock, actor, { action: "remove-user", targetType: "user", targetId: userId, metadata: { email: user.email } });
  });
}
