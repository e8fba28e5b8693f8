import { z } from "zod";
import { emailAddress } from "../../trpc/schema.ts";
import { FILTER_OPERATORS } from "./list-members.service.ts";

/*
 * Inputs of the organization procedures: better-auth's organization plugin bodies and queries
 * (docs/organizations.md). GET routes read the query string, where every value is a string:
 * numbers and booleans are coerced here. Lengths are bounded so a row never fails to fit.
 */

const id = z.string().min(1, "is required").max(64);
const name = z.string().min(1, "is required").max(255);
const slug = z.string().min(1, "is required").max(255);
const logo = z.string().max(2048).nullish();
/** At most 32 keys and 8 KiB of JSON (stored as text). */
const metadata = z
  .record(z.string().max(128), z.unknown())
  .refine((m) => Object.keys(m).length <= 32, "has more than 32 keys")
  .refine((m) => JSON.stringify(m).length <= 8192, "is larger than 8 KiB")
  .optional();
const integer = (min: number, max: number) =>
  z.union([z.number(), z.string().regex(/^\d{1,10}$/, "must be an integer").transform(Number)]).pipe(z.number().int("must be an integer").min(min).max(max));
const bool = z.union([z.boolean(), z.enum(["true", "false"]).transform((v) => v === "true")]);
/** One role, several comma-joined, or a list. */
export const roleValue = z.union([z.string().min(1, "is required").max(255), z.array(z.string().min(1).max(64)).min(1).max(32)]);

export const createInput = z.object({ name, slug, logo, metadata, keepCurrentActiveOrganization: bool.optional() });
export const updateInput = z.object({
  organizationId: id.optional(),
  data: z.object({ name: name.optional(), slug: slug.optional(), logo, metadata }),
});
export const organizationIdInput = z.object({ organizationId: id });
export const checkSlugInput = z.object({ slug });
export const setActiveInput = z.object({ organizationId: id.nullable().optional(), organizationSlug: slug.optional() });
export const getFullInput = z
  .object({ organizationId: id.optional(), organizationSlug: slug.optional(), membersLimit: integer(1, 1000).optional() })
  .optional();

export const listMembersInput = z
  .object({
    organizationId: id.optional(),
    organizationSlug: slug.optional(),
    limit: integer(1, 1000).optional(),
    offset: integer(0, 1_000_000_000).optional(),
    sortBy: z.string().max(64).optional(),
    sortDirection: z.enum(["asc", "desc"]).optional(),
    filterField: z.string().max(64).optional(),
    filterOperator: z.enum(FILTER_OPERATORS).optional(),
    filterValue: z.union([z.string().max(1024), z.number(), z.boolean(), z.array(z.union([z.string().max(64), z.number()])).max(100)]).optional(),
  })
  .optional();

export const addMemberInput = z.object({ userId: id, role: roleValue, organizationId: id, teamId: id.optional() });
export const removeMemberInput = z.object({ memberIdOrEmail: z.string().min(1, "is required").max(320), organizationId: id.optional() });
export const updateMemberRoleInput = z.object({ memberId: id, role: roleValue, organizationId: id.optional() });
export const activeMemberRoleInput = z.object({ userId: id.optional(), organizationId: id.optional(), organizationSlug: slug.optional() }).optional();

const permissions = z.record(z.string().max(64), z.array(z.string().max(64)).max(32)).refine((p) => Object.keys(p).length <= 16, "has more than 16 resources");
/** better-auth's body: `permissions` (or the deprecated `permission`), exactly one of them. */
export const hasPermissionInput = z
  .object({ organizationId: id.optional(), permissions: permissions.optional(), permission: permissions.optional() })
  .refine((b) => (b.permissions === undefined) !== (b.permission === undefined), "give either permissions or permission");
export type HasPermissionInput = z.infer<typeof hasPermissionInput>;

export const inviteInput = z.object({
  email: emailAddress,
  role: roleValue,
  organizationId: id.optional(),
  resend: bool.optional(),
  teamId: id.optional(),
});
export const invitationIdInput = z.object({ invitationId: id });
export const getInvitationInput = z.object({ id });
export const listInvitationsInput = z.object({ organizationId: id.optional() }).optional();
export const listUserInvitationsInput = z.object({ email: emailAddress.optional() }).optional();

const teamName = z.string().min(1, "is required").max(255);
export const createTeamInput = z.object({ name: teamName, organizationId: id.optional() });
export const listTeamsInput = z.object({ organizationId: id.optional() }).optional();
export const updateTeamInput = z.object({ teamId: id, data: z.object({ name: teamName.optional() }) });
export const removeTeamInput = z.object({ teamId: id, organizationId: id.optional() });
export const teamMemberInput = z.object({ teamId: id, userId: id });
export const listTeamMembersInput = z.object({ teamId: id.optional() }).optional();
export const setActiveTeamInput = z.object({ teamId: id.nullable().optional() });

const dynamicRoleName = z.string().min(1, "is required").max(64).regex(/^[A-Za-z0-9_.-]+$/, "role names cannot hold commas or spaces");
const rolePermission = z.record(z.string().max(64), z.array(z.string().max(64)).max(32)).refine((p) => Object.keys(p).length <= 16, "has more than 16 resources");
const roleRef = { roleName: z.string().min(1).max(64).optional(), roleId: id.optional() };
const oneRef = (b: { roleName?: string | undefined; roleId?: string | undefined }) => (b.roleName === undefined) !== (b.roleId === undefined);
export const createRoleInput = z.object({ role: dynamicRoleName, permission: rolePermission, organizationId: id.optional() });
export const updateRoleInput = z
  .object({ ...roleRef, organizationId: id.optional(), data: z.object({ permission: rolePermission.optional(), roleName: dynamicRoleName.optional() }) })
  .refine(oneRef, "give either roleName or roleId");
export const deleteRoleInput = z.object({ ...roleRef, organizationId: id.optional() }).refine(oneRef, "give either roleName or roleId");
export const listRolesInput = z.object({ organizationId: id.optional() }).optional();
export const getRoleInput = z.object({ ...roleRef, organizationId: id.optional() }).refine(oneRef, "give either roleName or roleId");
