import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { AuthError } from "../../errors.ts";
import { endSessionsOf, type Actor } from "../../core/index.ts";
import { changeUser } from "./users.service.ts";

export interface BanInput {
  userId: string;
  banReason?: string | undefined;
  /** Seconds from now; none: until unbanned. */
  banExpiresIn?: number | undefined;
}

/**
 * Bans and ends every session acting as the user in the same transaction (docs/wire-contract.md §3).
 * Every sign-in path then answers 403 BANNED_USER until the ban expires (it lifts itself at
 * the next sign-in) or an admin unbans.
 */
export function banUser(app: App, em: EntityManager, actor: Actor, input: BanInput) {
  const banExpires = input.banExpiresIn === undefined ? null : new Date(app.clock.now().getTime() + input.banExpiresIn * 1000);
  const banReason = input.banReason || "No reason";
  return changeUser(app, em, actor, input.userId, "ban-user", async (user, tx) => {
    if (user.id === actor.userId) throw new AuthError("YOU_CANNOT_BAN_YOURSELF");
    await endSessionsOf(app, tx, user.id);
    return { set: { banned: true, banReason, banExpires }, metadata: { banReason, banExpires: banExpires?.toISOString() ?? null } };
  });
}

export function unbanUser(app: App, em: EntityManager, actor: Actor, userId: string) {
  return changeUser(app, em, actor, userId, "unban-user", (user) => ({
    set: { banned: false, banReason: null, banExpires: null },
    metadata: { wasBanned: user.banned },
  }));
}
