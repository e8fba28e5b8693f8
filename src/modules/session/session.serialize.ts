import type { SessionRow, UserRow } from "../../db/session-store/index.ts";

/** CONTRACT.md §2: the user record every response carries. Hand-written: hot path, no output schema. */
export function publicUser(u: UserRow) {
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
    banExpires: u.banExpires ? u.banExpires.toISOString() : null,
    twoFactorEnabled: u.twoFactorEnabled,
    createdAt: u.createdAt.toISOString(),
    updatedAt: u.updatedAt.toISOString(),
  };
}

export type PublicUser = ReturnType<typeof publicUser>;

export function publicSession(s: SessionRow) {
  return {
    id: s.id,
    userId: s.userId,
    expiresAt: s.expiresAt.toISOString(),
    createdAt: s.createdAt.toISOString(),
    updatedAt: s.updatedAt.toISOString(),
    ipAddress: s.ipAddress ?? null,
    userAgent: s.userAgent ?? null,
    impersonatedBy: s.impersonatedBy ?? null,
  };
}

export type PublicSession = ReturnType<typeof publicSession>;
