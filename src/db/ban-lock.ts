import type { EntityManager } from "@mikro-orm/core";
import type { Dialect } from "./target.ts";

/*
 * A sign-in that proved the password waits for a concurrent ban, or the ban waits for it
 * (admin changeUser locks the row FOR UPDATE before ending sessions): either the ban came first
 * and the sign-in is refused, or the ban then ends the session the sign-in made.
 */

/** The user's ban columns, read FOR SHARE on PostgreSQL (SQLite runs one transaction at a time). */
export async function lockBanState(tx: EntityManager, dialect: Dialect, userId: string): Promise<{ banned: boolean; banExpires: Date | null } | null> {
  const lock = dialect === "sqlite" ? "" : " for share";
  const rows = await tx.getConnection().execute<{ banned: unknown; ban_expires: unknown }[]>(
    `select banned, ban_expires from users where id = ?${lock}`,
    [userId],
    "all",
    tx.getTransactionContext(),
  );
  const row = rows[0];
  if (!row) return null;
  return {
    banned: row.banned === true || row.banned === 1,
    banExpires: row.ban_expires === null || row.ban_expires === undefined ? null : new Date(row.ban_expires as string | number | Date),
  };
}
