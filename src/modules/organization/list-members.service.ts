import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Member, Organization } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { isUuid, type ResolvedSession } from "../../core/index.ts";
import { requireMembershipNow, targetOrganizationId } from "./access.ts";
import { memberTotalKey, memberTotals } from "./member-totals.ts";
import { membersWithUsers } from "./full-organization.ts";
import { publicMember } from "./views.ts";

/**
 * GET /organization/list-members (docs/organizations.md "Listing members"): better-auth's query,
 * with its sort and filter fields an allowlist (anything else 400, never a query on an unknown
 * column). Each order walks an index of members: (organization, createdAt, id) or
 * (organization, role, id); the filter on role or user stays within the organization's entries.
 * The caller's membership is the prepared lookup (access.ts requireMembershipNow), and a large
 * total is counted once per organization and filter (member-totals.ts).
 */
export const SORT_FIELDS = ["createdAt", "role"] as const;
export const FILTER_FIELDS = ["role", "userId", "id"] as const;
export const FILTER_OPERATORS = ["eq", "ne", "in"] as const;

export interface ListMembersQuery {
  organizationId?: string | undefined;
  organizationSlug?: string | undefined;
  limit?: number | undefined;
  offset?: number | undefined;
  sortBy?: string | undefined;
  sortDirection?: "asc" | "desc" | undefined;
  filterField?: string | undefined;
  filterOperator?: (typeof FILTER_OPERATORS)[number] | undefined;
  filterValue?: string | number | boolean | (string | number)[] | undefined;
}

const COLUMN = { role: "role", userId: "user", id: "id" } as const;

/** The filter as a where clause on members; 400 for a field not in the allowlist. */
function filterOf(q: ListMembersQuery): Record<string, unknown> {
  if (!q.filterField) return {};
  const field = q.filterField as (typeof FILTER_FIELDS)[number];
  if (!(FILTER_FIELDS as readonly string[]).includes(field)) throw new AuthError("INVALID_FILTER_FIELD");
  const op = q.filterOperator ?? "eq";
  const raw = q.filterValue;
  const values = (Array.isArray(raw) ? raw : op === "in" && typeof raw === "string" ? raw.split(",") : [raw]).map((v) => String(v ?? ""));
  // A user or member id that is not a UUID matches nothing (and PostgreSQL would reject it).
  const valid = field === "role" ? values : values.filter(isUuid);
  const column = COLUMN[field];
  if (op === "in") return { [column]: { $in: valid } };
  if (op === "ne") return valid.length === 0 ? {} : { [column]: { $ne: valid[0] } };
  return valid.length === 0 ? { id: { $in: [] } } : { [column]: valid[0] };
}

export async function listMembers(app: App, em: EntityManager, auth: ResolvedSession, q: ListMembersQuery) {
  let organizationId: string;
  if (q.organizationSlug) {
    const org = await em.findOne(Organization, { slug: q.organizationSlug }, { fields: ["id"], disableIdentityMap: true });
    if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
    organizationId = org.id;
  } else organizationId = targetOrganizationId(auth, q.organizationId);
  if (q.sortBy !== undefined && !(SORT_FIELDS as readonly string[]).includes(q.sortBy)) throw new AuthError("INVALID_SORT_FIELD");
  const filter = filterOf(q);
  const where = { organization: organizationId, ...filter };
  await requireMembershipNow(app, auth, organizationId, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  const dir = q.sortDirection ?? "asc";
  const orderBy: Record<string, "asc" | "desc"> = q.sortBy === "role" ? { role: dir, id: dir } : { createdAt: dir, id: dir };
  const limit = q.limit ?? Math.min(app.config.organization.membershipLimit, 100);
  // A large organization's total is counted once per filter (member-totals.ts), the page beside it.
  const totals = memberTotals(app);
  const key = memberTotalKey(organizationId, filter);
  const since = totals.generation;
  const countedAtMs = app.clock.now().getTime();
  const cached = totals.get(key, () => app.orm.em.fork().count(Member, where));
  const [members, total] = await Promise.all([
    pageOf(em, where, orderBy, limit, q.offset ?? 0, cached),
    cached ?? em.fork().count(Member, where),
  ]);
  if (cached === undefined) totals.put(key, total, countedAtMs, since);
  return { members: members.map(publicMember), total };
}

/**
 * The page, read from the nearer end of the order's index when the total is known (as admin
 * list-users does): offset 90,000 of 100,000 walks 9,900 entries backwards, not 90,000 forwards.
 * The order ends on the id, so the backward read reversed is exactly the forward one.
 */
function pageOf(em: EntityManager, where: object, orderBy: Record<string, "asc" | "desc">, limit: number, offset: number, total: number | undefined) {
  if (total === undefined || offset <= total / 2) return membersWithUsers(em, where, { limit, offset, orderBy });
  const end = Math.min(total, offset + limit);
  if (end <= offset) return Promise.resolve([]);
  const backwards = Object.fromEntries(Object.entries(orderBy).map(([k, d]) => [k, d === "asc" ? "desc" : "asc"])) as Record<string, "asc" | "desc">;
  return membersWithUsers(em, where, { limit: end - offset, offset: total - end, orderBy: backwards }).then((page) => page.reverse());
}
