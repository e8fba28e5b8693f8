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
