import { z } from "zod";
import { organizationGrantsSchema, withBuiltInOrganizationRoles } from "../../core/permissions.ts";

const roleName = z.string().min(1).max(64).regex(/^[A-Za-z0-9_.-]+$/, "role names cannot hold commas or spaces");

/** The `organization` section of the config (src/config/schema.ts): better-auth's organization options that Portcullis keeps (docs/organizations.md). */
export const organizationConfig = z
  .object({
    /** The organization routes; false: they answer 404. */
    enabled: z.boolean().default(true),
    /** Whether signed-in users may create organizations (admins always may, through the library). */
    allowUserToCreateOrganization: z.boolean().default(true),
    /** Organizations a user may belong to (create and accept count); unset: no limit. */
    organizationLimit: z.number().int().positive().optional(),
    /** Members an organization may have. */
    membershipLimit: z.number().int().positive().default(100),
    /** The role the creator of an organization gets; the role the last-owner rules protect. */
    creatorRole: roleName.default("owner"),
    /** Extra organization roles (or replacements of `owner`, `admin`, `member`), e.g. `{ billing: { organization: ["update"] } }`. */
    roles: z.record(roleName, organizationGrantsSchema).default({}),
    /** Seconds an invitation stays valid (48 h). */
    invitationExpiresIn: z.number().int().positive().max(365 * 86_400).default(48 * 3600),
    /** Pending invitations per organization. */
    invitationLimit: z.number().int().positive().default(100),
    /** The app's page the mail links to (`?invitationId=`), which calls accept-invitation; default `{publicUrl}/accept-invitation`. */
    invitationUrl: z.url().optional(),
    /** delete answers 404 when true. */
    disableOrganizationDeletion: z.boolean().default(false),
    teams: z
      .object({
        /** Teams inside organizations (create-team and the rest); false: those routes answer 404. */
        enabled: z.boolean().default(false),
        /** Teams per organization. */
        maximumTeams: z.number().int().positive().default(10),
        /** Members per team; unset: no limit. */
        maximumMembersPerTeam: z.number().int().positive().optional(),
        /** Whether the last team of an organization may be removed. */
        allowRemovingAllTeams: z.boolean().default(false),
        /** A new organization gets a team named after it, with the creator in it. */
        defaultTeam: z.boolean().default(true),
      })
      .strict()
      .prefault({}),
    dynamicAccessControl: z
      .object({
        /** Owners define an organization's own roles at run time (create-role and the rest); false: those routes answer 404. */
        enabled: z.boolean().default(false),
        /** Dynamic roles per organization. */
        maximumRolesPerOrganization: z.number().int().positive().default(100),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .transform((o) => ({ ...o, roles: withBuiltInOrganizationRoles(o.roles) }))
  .superRefine((o, ctx) => {
    if (!Object.hasOwn(o.roles, o.creatorRole)) ctx.addIssue({ code: "custom", message: `role "${o.creatorRole}" is not defined in organization.roles` });
  })
  .prefault({});
