import { z } from "zod";
import { invitationRecord, memberRecord } from "./organization.records.ts";

/** The invitation operations of organization.openapi.ts (docs/organizations.md "Invitations"). */
const switchable = true;
const recipient = ["INVITATION_NOT_FOUND", "INVITATION_EXPIRED", "YOU_ARE_NOT_THE_RECIPIENT_OF_THE_INVITATION"] as const;

export const invitationDocs = {
  "organization.inviteMember": {
    summary: "Invite an address into an organization",
    description:
      "Mails `{organization.invitationUrl}?invitationId=<id>` (after the answer, under the per-address mail limit). `resend: true` extends a pending invitation and mails it again. " +
      "Only owners invite owners; at most `organization.invitationLimit` pending invitations.",
    access: "session" as const,
    switchable,
    output: invitationRecord,
    errors: [
      "ORGANIZATION_NOT_FOUND", "MEMBER_NOT_FOUND", "ROLE_NOT_FOUND", "YOU_ARE_NOT_ALLOWED_TO_INVITE_USERS_TO_THIS_ORGANIZATION", "YOU_ARE_NOT_ALLOWED_TO_INVITE_USER_WITH_THIS_ROLE",
      "USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION", "USER_IS_ALREADY_INVITED_TO_THIS_ORGANIZATION", "INVITATION_LIMIT_REACHED", "TEAM_NOT_FOUND",
    ] as const,
  },
  "organization.acceptInvitation": {
    summary: "Accept an invitation",
    description: "Signed in with the invited address, verified. The organization becomes the session's active one.",
    access: "own-session" as const,
    switchable,
    output: z.object({ invitation: invitationRecord, member: memberRecord }),
    errors: [...recipient, "ORGANIZATION_NOT_FOUND", "ORGANIZATION_MEMBERSHIP_LIMIT_REACHED", "USER_IS_ALREADY_A_MEMBER_OF_THIS_ORGANIZATION", "YOU_HAVE_REACHED_THE_MAXIMUM_NUMBER_OF_ORGANIZATIONS", "TEAM_NOT_FOUND", "TEAM_MEMBER_LIMIT_REACHED"] as const,
  },
  "organization.rejectInvitation": {
    summary: "Reject an invitation",
    access: "own-session" as const,
    switchable,
    output: z.object({ invitation: invitationRecord, member: z.null() }),
    errors: recipient,
  },
  "organization.cancelInvitation": {
    summary: "Cancel a pending invitation",
    access: "session" as const,
    switchable,
    output: invitationRecord,
    errors: ["INVITATION_NOT_FOUND", "MEMBER_NOT_FOUND", "YOU_ARE_NOT_ALLOWED_TO_CANCEL_THIS_INVITATION"] as const,
  },
  "organization.getInvitation": {
    summary: "An invitation, as its recipient sees it",
    access: "session" as const,
    switchable,
    output: invitationRecord.extend({ organizationName: z.string(), organizationSlug: z.string(), inviterEmail: z.string().nullable() }),
    errors: recipient,
  },
  "organization.listInvitations": {
    summary: "An organization's invitations",
    access: "session" as const,
    switchable,
    output: z.array(invitationRecord),
    errors: ["NO_ACTIVE_ORGANIZATION", "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION"] as const,
  },
  "organization.listUserInvitations": {
    summary: "The pending invitations to the caller's verified address",
    access: "session" as const,
    switchable,
    output: z.array(invitationRecord.extend({ organizationName: z.string() })),
    errors: ["EMAIL_VERIFICATION_REQUIRED_FOR_INVITATION"] as const,
  },
};
