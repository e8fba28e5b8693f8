import { z } from "zod";
import { requireOneOf } from "../../openapi/doc.ts";
import { teamRecord } from "./organization.records.ts";

/** The team and dynamic-role operations of organization.openapi.ts (docs/organizations.md "Teams", "Dynamic roles"). */
const switchable = true;
const access = "session" as const;
const teamMember = z.object({ id: z.string(), teamId: z.string(), userId: z.string(), createdAt: z.iso.datetime({ offset: true }) });
const message = z.object({ message: z.string() });
const role = z.object({
  id: z.string(),
  organizationId: z.string(),
  role: z.string(),
  permission: z.record(z.string(), z.array(z.string())),
  createdAt: z.iso.datetime({ offset: true }),
  updatedAt: z.iso.datetime({ offset: true }).nullable(),
});
const roleRefErrors = ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION", "ROLE_NOT_FOUND"] as const;

export const teamDocs = {
  "organization.createTeam": {
    summary: "Create a team",
    access, switchable, output: teamRecord,
    errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_CREATE_TEAMS_IN_THIS_ORGANIZATION", "YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_TEAMS"] as const,
  },
  "organization.listTeams": { summary: "An organization's teams", access, switchable, output: z.array(teamRecord), errors: ["NO_ACTIVE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_ACCESS_THIS_ORGANIZATION"] as const },
  "organization.updateTeam": { summary: "Rename a team", access, switchable, output: teamRecord, errors: ["NO_ACTIVE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_TEAM", "TEAM_NOT_FOUND"] as const },
  "organization.removeTeam": {
    summary: "Remove a team",
    access, switchable, output: message,
    errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_TEAM", "YOU_ARE_NOT_ALLOWED_TO_DELETE_TEAMS_IN_THIS_ORGANIZATION", "TEAM_NOT_FOUND", "UNABLE_TO_REMOVE_LAST_TEAM"] as const,
  },
  "organization.addTeamMember": {
    summary: "Add a member of the organization to a team",
    access, switchable, output: teamMember,
    errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_TEAM_MEMBER", "TEAM_NOT_FOUND", "TEAM_MEMBER_LIMIT_REACHED"] as const,
  },
  "organization.removeTeamMember": {
    summary: "Remove a user from a team",
    access, switchable, output: message,
    errors: ["NO_ACTIVE_ORGANIZATION", "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_REMOVE_A_TEAM_MEMBER", "TEAM_NOT_FOUND"] as const,
  },
  "organization.listTeamMembers": { summary: "A team's members", access, switchable, output: z.array(teamMember), errors: ["YOU_DO_NOT_HAVE_AN_ACTIVE_TEAM", "TEAM_NOT_FOUND", "USER_IS_NOT_A_MEMBER_OF_THE_TEAM"] as const },
  "organization.setActiveTeam": {
    summary: "Set the session's active team",
    description: "`teamId: null` clears it. get-session shows `session.activeTeamId`.",
    access, switchable, output: teamRecord.nullable(),
    errors: ["NO_ACTIVE_ORGANIZATION", "TEAM_NOT_FOUND", "USER_IS_NOT_A_MEMBER_OF_THE_TEAM"] as const,
  },
  "organization.listUserTeams": { summary: "The caller's teams", access, switchable, output: z.array(teamRecord) },
  "organization.createRole": {
    summary: "Create a role of the organization (dynamic access control)",
    description: "Only actions the caller's own roles grant can be given.",
    access, switchable,
    output: z.object({ success: z.literal(true), roleData: role, statements: z.record(z.string(), z.array(z.string())) }),
    errors: ["NO_ACTIVE_ORGANIZATION", "ORGANIZATION_NOT_FOUND", "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_ROLE", "ROLE_NAME_IS_ALREADY_TAKEN", "INVALID_RESOURCE", "TOO_MANY_ROLES"] as const,
  },
  "organization.updateRole": {
    summary: "Change a role of the organization",
    description: "A role assigned to members cannot be renamed.",
    access, switchable,
    output: z.object({ success: z.literal(true), roleData: role }),
    input: requireOneOf("roleName", "roleId"),
    errors: [...roleRefErrors, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_A_ROLE", "ROLE_NAME_IS_ALREADY_TAKEN", "INVALID_RESOURCE", "ROLE_IS_ASSIGNED_TO_MEMBERS"] as const,
  },
  "organization.deleteRole": {
    summary: "Delete a role of the organization",
    description: "Not a configured role, and not while members hold it.",
    access, switchable,
    output: z.object({ success: z.literal(true) }),
    input: requireOneOf("roleName", "roleId"),
    errors: [...roleRefErrors, "YOU_ARE_NOT_ALLOWED_TO_DELETE_A_ROLE", "CANNOT_DELETE_A_PRE_DEFINED_ROLE", "ROLE_IS_ASSIGNED_TO_MEMBERS"] as const,
  },
  "organization.listRoles": { summary: "The organization's own roles", access, switchable, output: z.array(role), errors: ["NO_ACTIVE_ORGANIZATION", "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_LIST_A_ROLE"] as const },
  "organization.getRole": { summary: "One of the organization's own roles", access, switchable, output: role, errors: [...roleRefErrors, "YOU_ARE_NOT_ALLOWED_TO_READ_A_ROLE"] as const, input: requireOneOf("roleName", "roleId") },
};
