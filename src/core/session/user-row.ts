import { randomUUID } from "node:crypto";
import type { IUser } from "../../db/entities/index.ts";
import type { UserRow } from "../../db/session-store/index.ts";

export function userRow(u: IUser): UserRow {
  return {
    id: u.id,
    name: u.name,
    email: u.email,
    emailVerified: u.emailVerified,
    image: u.image ?? null,
    username: u.username ?? null,
    displayUsername: u.displayUsername ?? null,
    role: u.role,
    banned: u.banned,
    banReason: u.banReason ?? null,
    banExpires: u.banExpires ?? null,
    twoFactorEnabled: u.twoFactorEnabled,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

export interface NewUserFields {
  email: string;
  name: string;
  image: string | null;
  /** Normalised (lower-cased) username, or null. */
  username: string | null;
  /** As the user typed it; kept only with a username. */
  displayUsername: string | null | undefined;
  role: string;
  emailVerified: boolean;
}

/** A new user's row (sign-up, admin create-user): a fresh id, not banned, no second factor, created now. */
export function newUserRow(fields: NewUserFields, now: Date): UserRow {
  return {
    id: randomUUID(),
    ...fields,
    displayUsername: fields.username === null ? null : (fields.displayUsername ?? null),
    banned: false,
    banReason: null,
    banExpires: null,
    twoFactorEnabled: false,
    createdAt: now,
    updatedAt: now,
  };
}
