import type { App } from "../../app.ts";
import type { MaybePromise, MembershipRow } from "../../db/session-store/index.ts";
import type { ResolvedSession } from "./sessions.ts";

/**
 * The caller's membership of an organization (docs/organizations.md "Roles"): one prepared lookup
 * on the unique (organization, user) index, remembered by the session's cache entry for as long
 * as the entry lives. Every write that adds, re-roles or removes a member, or deletes an
 * organization, evicts the members' entries through revoke.ts membershipsChanged, here and on
 * every other instance, as revocations do; the cache's TTL bounds what a write outside the service
 * leaves. A lookup that an eviction overtook is answered but not remembered (the cache's
 * generation, as for sessions). Synchronous when the answer is at hand (remembered, or SQLite).
 * `organizationId` must be a UUID (the caller checks).
 */
export function membershipOf(app: App, auth: ResolvedSession, organizationId: string): MaybePromise<MembershipRow | null> {
  const { entry } = auth;
  const known = entry.membership(organizationId);
  if (known !== undefined) return known;
  const generation = app.sessionCache.generation;
  const keep = (row: MembershipRow | null) => {
    if (app.sessionCache.generation === generation) entry.rememberMembership(organizationId, row);
    return row;
  };
  const found = app.sessions.findMembership(organizationId, auth.user.id);
  return found instanceof Promise ? found.then(keep) : keep(found);
}
