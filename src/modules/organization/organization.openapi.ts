import { z } from "zod";
import { moduleDoc, requireOneOf, type JsonSchema } from "../../openapi/doc.ts";
import { statusTrue } from "../../openapi/records.ts";
import { fullOrganizationRecord, memberRecord, organizationRecord } from "./organization.records.ts";
import { invitationDocs } from "./invitations.docs.ts";
import { teamDocs } from "./teams.docs.ts";

const switchable = true;

/** has-permission's maps (a refinement JSON Schema cannot carry): written out here. */
function permissionMaps(schema: JsonSchema) {
  const map = { type: "object", additionalProperties: { type: "array", items: { type: "string", maxLength: 64 }, maxItems: 32 }, description: "resource → actions" };
  schema.properties = { ...(schema.properties as object), permissions: map, permission: { ...map, description: "Older clients' name for `permissions`" } };
  requireOneOf("permissions", "permission")(schema);
}

/** OpenAPI docs of organization.router.ts (src/openapi/doc.ts): better-auth's organization plugin shapes (docs/organizations.md). */
export const organizationDoc = moduleDoc({
  tag: "Organizations",
  description:
    "Organizations with members, roles, invitations and teams (docs/organizations.md), wire-compatible with better-auth's organization plugin. " +
    "Off (404) when `organization.enabled` is false.",
  operations: {
    "organization.create": {
      summary: "Create an organization",
      description: "The caller becomes its `creatorRole` (owner); it becomes the session's active organization unless `keepCurrentActiveOrganization`.",
      access: "own-session",
      switchable,
      output: organizationRecord.extend({ members: z.array(memberRecord) }),
      errors: ["ORGANIZATION_ALREADY_EXISTS", "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION", "YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS"],
    },
    "organization.update": {
      summary: "Update an organization",
      access: "session",
      switchable,
      output: organizationRecord,
      errors: ["ORGANIZATION_NOT_FOUND", "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION", "ORGANIZATION_SLUG_ALREADY_TAKEN"],
    },
    "organization.delete": {
      summary: "Delete an organization",
      description: "Owners only: its members, invitations, teams and roles go with it, and no session works in it any more.",
      access: "session",
      switchable,
      output: organizationRecord,
      errors: ["ORGANIZATION_NOT_FOUND", "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION", "NOT_FOUND"],
    },
    "organization.getFullOrganization": {
      summary: "An organization with its members, invitations and teams",
      description: "By `organizationId`, `organizationSlug`, or the active organization; null when none is named or active.",
      access: "session",
      switchable,
      output: fullOrganizationRecord.nullable(),
      errors: ["ORGANIZATION_NOT_FOUND", "NOT_A_MEMBER_OF_THE_ORGANIZATION"],
    },
    "organization.list": { summary: "The caller's organizations", access: "session", switchable, output: z.array(organizationRecord) },
    "organization.checkSlug": { summary: "Is this slug free", access: "session", switchable, output: statusTrue, errors: ["ORGANIZATION_SLUG_ALREADY_TAKEN"] },
    "organization.setActive": {
      summary: "Set the session's active organization",
      description: "`organizationId: null` clears it (answer null). get-session shows `session.activeOrganizationId`.",
      access: "session",
      switchable,
      output: organizationRecord.nullable(),
      errors: ["ORGANIZATION_NOT_FOUND", "NOT_A_MEMBER_OF_THE_ORGANIZATION"],
    },
    "organization.listMembers": {
      summary: "A page of members",
      description: "`sortBy`: createdAt or role; `filterField`: role, userId or id (`filterOperator` eq, ne, in); anything else 400.",
      access: "session",
      switchable,
      output: z.object({ members: z.array(memberRecord), total: z.number().int() }),
      errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION", "INVALID_SORT_FIELD", "INVALID_FILTER_FIELD"],
    },
    "organization.addMember": {
      summary: "Add a user to an organization (admins)",
      description: "better-auth's server-only add-member; here for admins with `user: [\"update\"]` and the library's caller.",
      access: "session",
      switchable,
      output: memberRecord,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS"],
      errors: ["USER_NOT_FOUND", "ORGANIZATION_NOT_FOUND", "ROLE_NOT_FOUND", "USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION", "ORGANIZATION_MEMBERSHIP_LIMIT_REACHED", "TEAM_NOT_FOUND", "TEAM_MEMBER_LIMIT_REACHED"],
    },
    "organization.removeMember": {
      summary: "Remove a member",
      description: "By member id or address. Owners are removed by owners only, and never the last one.",
      access: "session",
      switchable,
      output: z.object({ member: memberRecord }),
      errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "MEMBER_NOT_FOUND", "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER", "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER"],
    },
    "organization.updateMemberRole": {
      summary: "Change a member's role",
      description: "Only owners change owners or make owners; the last owner cannot step down.",
      access: "session",
      switchable,
      output: memberRecord,
      errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "ROLE_NOT_FOUND", "MEMBER_NOT_FOUND", "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER", "YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER"],
    },
    "organization.leave": {
      summary: "Leave an organization",
      access: "session",
      switchable,
      output: memberRecord,
      errors: ["MEMBER_NOT_FOUND", "YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER"],
    },
    "organization.getActiveMember": { summary: "The caller's membership of the active organization", access: "session", switchable, output: memberRecord, errors: ["NO_ACTIVE_ORGANIZATION", "MEMBER_NOT_FOUND"] },
    "organization.getActiveMemberRole": {
      summary: "A member's role",
      access: "session",
      switchable,
      output: z.object({ role: z.string() }),
      errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION"],
    },
    "organization.hasPermission": {
      summary: "Does the caller's role in the organization grant these permissions",
      access: "session",
      switchable,
      output: z.object({ success: z.boolean(), error: z.null() }),
      errors: ["NO_ACTIVE_ORGANIZATION", "NOT_A_MEMBER_OF_THE_ORGANIZATION"],
      input: permissionMaps,
    },
    "admin.listUserOrganizations": {
      summary: "A user's organizations (admins)",
      access: "session",
      switchable,
      output: z.array(organizationRecord.extend({ memberId: z.string(), role: z.string() })),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_GET_USER"],
    },
    "admin.listOrganizations": {
      summary: "Every organization, newest first, with its member count (admins)",
      access: "session",
      switchable,
      output: z.object({ organizations: z.array(organizationRecord.extend({ memberCount: z.number().int() })), total: z.number().int() }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_USERS"],
    },
    "admin.getOrganization": {
      summary: "One organization with its first members and pending invitations (admins)",
      access: "session",
      switchable,
      output: fullOrganizationRecord.extend({ memberCount: z.number().int() }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_GET_USER"],
      errors: ["ORGANIZATION_NOT_FOUND"],
    },
    ...invitationDocs,
    ...teamDocs,
  },
});
