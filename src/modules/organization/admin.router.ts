import { z } from "zod";
import { Member } from "../../db/entities/index.ts";
import { isUuid } from "../../core/index.ts";
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
