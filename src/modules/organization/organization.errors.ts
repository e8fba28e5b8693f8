import type { ErrorTable } from "../../error-table.ts";

/**
 * Organizations (better-auth's organization plugin, docs/organizations.md): its codes, with its
 * statuses, where Portcullis answers them. Codes are part of the wire contract: add new ones,
 * never rename (src/errors.ts composes the tables; docs/errors.md lists them).
 */
export const organizationErrors = {
  // 400
  ORGANIZATION_ALREADY_EXISTS: [400, "Organization already exists"],
  ORGANIZATION_SLUG_ALREADY_TAKEN: [400, "Organization slug already taken"],
  ORGANIZATION_NOT_FOUND: [400, "Organization not found"],
  USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION: [400, "User is not a member of the organization"],
  NO_ACTIVE_ORGANIZATION: [400, "No active organization"],
  USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION: [400, "User is already a member of this organization"],
  MEMBER_NOT_FOUND: [400, "Member not found"],
  ROLE_NOT_FOUND: [400, "Role not found"],
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_AS_THE_ONLY_OWNER: [400, "You cannot leave the organization as the only owner"],
  YOU_CANNOT_LEAVE_THE_ORGANIZATION_WITHOUT_AN_OWNER: [400, "You cannot leave the organization without an owner"],
  TEAM_NOT_FOUND: [400, "Team not found"],
  USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION: [400, "User is already invited to this organization"],
  INVITATION_NOT_FOUND: [400, "Invitation not found"],
  INVITATION_EXPIRED: [400, "The invitation has expired"],
  INVALID_SORT_FIELD: [400, "This field cannot be sorted by"],
  INVALID_FILTER_FIELD: [400, "This field cannot be filtered by"],
  // 403
  YOU_ARE_NOT_ALLOWED_TO_CREATE_A_NEW_ORGANIZATION: [403, "You are not allowed to create a new organization"],
  YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS: [403, "You have reached the maximum number of organizations"],
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_ORGANIZATION: [403, "You are not allowed to update this organization"],
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_ORGANIZATION: [403, "You are not allowed to delete this organization"],
  /** set-active, get-full-organization, has-permission: better-auth's code with 403. */
  NOT_A_MEMBER_OF_THE_ORGANIZATION: [403, "User is not a member of the organization", "USER_IS_NOT_A_MEMBER_OF_THE_ORGANIZATION"],
  YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION: [403, "You are not a member of this organization"],
  YOU_ARE_NOT_ALLOWED_TO_DELETE_THIS_MEMBER: [403, "You are not allowed to delete this member"],
  YOU_ARE_NOT_ALLOWED_TO_UPDATE_THIS_MEMBER: [403, "You are not allowed to update this member"],
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION: [403, "You are not allowed to invite users to this organization"],
  YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE: [403, "You are not allowed to invite a user with this role"],
  YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION: [403, "You are not the recipient of the invitation"],
  YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION: [403, "You are not allowed to cancel this invitation"],
  EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION: [403, "Email verification required to view or list invitations for the session email"],
  INVITATION_LIMIT_REACHED: [403, "Invitation limit reached"],
  ORGANIZATION_MEMBERSHIP_LIMIT_REACHED: [403, "Organization membership limit reached"],
  TEAM_MEMBER_LIMIT_REACHED: [403, "Team member limit reached"],
} as const satisfies ErrorTable;
