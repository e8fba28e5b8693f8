import type { Family } from "../../core/index.ts";
import { Member, TeamMember } from "../../db/entities/index.ts";
import { membersChanged } from "./member-totals.ts";

export { organizationDoc } from "./organization.openapi.ts";
export { organizationRouter } from "./organization.router.ts";
export { checkPermission } from "./members.service.ts";
export { hasPermissionInput } from "./organization.schema.ts";
export { getOrganizationAsAdmin, listAllOrganizations, listUserOrganizations } from "./admin.router.ts";

/**
 * What the organization family holds for a user: memberships (docs/organizations.md "Removing
 * users"). A deleted user's memberships go with them, team memberships too (cascade); an
 * organization whose last owner was deleted keeps its other members and is recovered by an admin
 * (add-member with the owner role). Invitations the user sent stay: they name the inviter by id only.
 */
export const organizationFamily: Family = {
  name: "organization",
  holding: {
    async removed(app, tx, userId, removal) {
      if (removal.accounts !== "all") return;
      await tx.nativeDelete(TeamMember, { user: userId });
      await tx.nativeDelete(Member, { user: userId });
      membersChanged(app, tx, null, [userId]);
    },
  },
};
