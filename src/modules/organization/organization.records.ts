import { z } from "zod";
import { components } from "../../openapi/records.ts";

/** The records of docs/organizations.md, as the OpenAPI document shows them (views.ts writes them). */
const timestamp = z.iso.datetime({ offset: true });

export const organizationRecord = z.object({
  id: z.string(),
  name: z.string(),
  slug: z.string(),
  logo: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  createdAt: timestamp,
});
components.add(organizationRecord, { id: "Organization" });

const memberUser = z.object({ id: z.string(), name: z.string(), email: z.string(), image: z.string().nullable() });
export const memberRecord = z.object({
  id: z.string(),
  organizationId: z.string(),
  userId: z.string(),
  role: z.string().describe("Comma-joined role names"),
  createdAt: timestamp,
  user: memberUser.optional(),
});
components.add(memberRecord, { id: "Member" });

export const invitationRecord = z.object({
  id: z.string().describe("The invitation's id: what the mailed link carries (?invitationId=)"),
  organizationId: z.string(),
  email: z.string(),
  role: z.string(),
  status: z.string().describe("pending, accepted, rejected or canceled"),
  inviterId: z.string(),
  teamId: z.string().nullable(),
  expiresAt: timestamp,
  createdAt: timestamp,
});
components.add(invitationRecord, { id: "Invitation" });

export const teamRecord = z.object({ id: z.string(), name: z.string(), organizationId: z.string(), createdAt: timestamp, updatedAt: timestamp.nullable() });
components.add(teamRecord, { id: "Team" });

export const fullOrganizationRecord = organizationRecord.extend({
  members: z.array(memberRecord),
  invitations: z.array(invitationRecord),
  teams: z.array(teamRecord).optional().describe("When teams are on"),
});
