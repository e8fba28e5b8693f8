import { z } from "zod";
import { Member, Organization } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { isUuid } from "../../core/index.ts";
import { fullOrganization } from "./full-organization.ts";
import { procedures } from "./procedures.ts";
import { publicOrganization } from "./views.ts";

/**
 * GET /admin/list-user-organizations?userId= (`user: ["get"]`): the organizations a user belongs
 * to, each with the membership's id and role, oldest first (the console's user page).
 */
export const listUserOrganizations = procedures
  .withPermission("user", ["get"])
  .input(z.object({ userId: z.string().min(1, "is required").max(64) }))
  .query(async ({ ctx, input }) => {
    if (!isUuid(input.userId)) return [];
    const rows = await ctx.em.find(Member, { user: input.userId }, { populate: ["organization"], orderBy: { createdAt: "asc", id: "asc" }, disableIdentityMap: true });
    return rows.map((m) => ({ ...publicOrganization(m.organization.getEntity()), memberId: m.id, role: m.role }));
  });

const page = { limit: z.coerce.number().int().min(1).max(1000).optional(), offset: z.coerce.number().int().min(0).max(1_000_000_000).optional() };

/**
 * GET /admin/list-organizations?limit&offset (`user: ["list"]`): every organization, newest
 * first, with its member count (the console's organizations page).
 */
export const listAllOrganizations = procedures
  .withPermission("user", ["list"])
  .input(z.object(page).optional())
  .query(async ({ ctx, input }) => {
    const [rows, total] = await ctx.em.findAndCount(Organization, {}, { orderBy: { createdAt: "desc", id: "desc" }, limit: input?.limit ?? 50, offset: input?.offset ?? 0, disableIdentityMap: true });
    const counts = new Map<string, number>();
    for (const org of rows) counts.set(org.id, await ctx.em.count(Member, { organization: org.id }));
    return { organizations: rows.map((o) => ({ ...publicOrganization(o), memberCount: counts.get(o.id) ?? 0 })), total };
  });

/** GET /admin/get-organization?organizationId (`user: ["get"]`): one organization with its first members and its pending invitations. */
export const getOrganizationAsAdmin = procedures
  .withPermission("user", ["get"])
  .input(z.object({ organizationId: z.string().min(1).max(64), ...page }))
  .query(async ({ ctx, input }) => {
    const org = isUuid(input.organizationId) ? await ctx.em.findOne(Organization, { id: input.organizationId }, { disableIdentityMap: true }) : null;
    if (!org) throw new AuthError("ORGANIZATION_NOT_FOUND");
    const full = await fullOrganization(ctx.app, ctx.em, org, input.limit ?? 100);
    return { ...full, memberCount: await ctx.em.count(Member, { organization: org.id }) };
  });
