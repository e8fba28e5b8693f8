import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { createTotalCache, membershipsChanged, type TotalCache } from "../../core/index.ts";
import { afterCommit } from "../../db/transaction.ts";

/**
 * list-members' `total` per organization and filter (core/total-cache.ts): a large organization's
 * count is taken once, not on every page (docs/organizations.md "Listing members"). Every write
 * that adds, removes or re-roles a member calls membersChanged, so this instance never answers a
 * total from before it.
 */
const caches = new WeakMap<App, TotalCache>();

export function memberTotals(app: App): TotalCache {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = createTotalCache(app, "list-members")));
  return cache;
}

/** The cache key of one organization's list with one filter. */
export const memberTotalKey = (organizationId: string, filter: object) => `${organizationId}\n${JSON.stringify(filter)}`;

/**
 * The organization's members changed in `tx` (null: members of any organization, a user's
 * removal): its cached totals go now, and again once `tx` commits, so a count that read the rows
 * before the commit is not kept; and the sessions of `users` (whose memberships changed; "all":
 * an organization's deletion) forget the memberships they remember (core membershipOf), on every
 * instance. Every write of the members table calls it.
 */
export function membersChanged(app: App, tx: EntityManager, organizationId: string | null, users: readonly string[] | "all"): void {
  membershipsChanged(app, tx, users);
  const cache = caches.get(app);
  if (!cache) return;
  const prefix = organizationId === null ? "" : `${organizationId}\n`;
  cache.forget(prefix);
  afterCommit(tx, () => cache.forget(prefix));
}
