import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Member, OrganizationRole, type IOrganizationRole } from "../../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError, type ErrorCode } from "../../errors.ts";
import { actorOf, isUuid, ORGANIZATION_STATEMENTS, recordAudit, splitRoles, uuidv7, type Grants, type RequestInfo, type ResolvedSession } from "../../core/index.ts";
import { assertMemberMay, lockOrganization, memberMay, requireMembership, targetOrganizationId } from "./access.ts";
import type { MemberRow } from "./views.ts";

/**
 * Dynamic roles (better-auth's dynamic access control: create-role, update-role, delete-role,
 * list-roles, get-role; docs/organizations.md "Dynamic roles"), when
 * `organization.dynamicAccessControl.enabled`. A role's grants are checked by the same checker as
 * every other role (access.ts memberMay). Nobody grants what they do not hold: every action of a
 * new or changed role must be one the caller's roles grant. A role assigned to members can be
 * neither deleted nor renamed.
 */

function publicRole(r: { id: string; organization: { id: string } | string; role: string; permission: string; createdAt: Date; updatedAt?: Date | null | undefined }) {
  return {
    id: r.id,
    organizationId: typeof r.organization === "string" ? r.organization : r.organization.id,
    role: r.role,
    permission: JSON.parse(r.permission) as Record<string, string[]>,
    createdAt: r.createdAt.toISOString(),
    updatedAt: r.updatedAt ? r.updatedAt.toISOString() : null,
  };
}

/** Only the organization statements' resources and actions (400 INVALID_RESOURCE), and only what the caller holds (403 `denied`). */
async function assertGrantable(app: App, em: EntityManager, caller: MemberRow, permission: Record<string, string[]>, denied: ErrorCode): Promise<Grants> {
  for (const [resource, actions] of Object.entries(permission)) {
    const known = Object.hasOwn(ORGANIZATION_STATEMENTS, resource) ? (ORGANIZATION_STATEMENTS as Record<string, readonly string[]>)[resource]! : null;
    if (!known || !actions.every((a) => known.includes(a))) throw new AuthError("INVALID_RESOURCE");
  }
  for (const [resource, actions] of Object.entries(permission)) {
    for (const action of actions) if (!(await memberMay(app, em, caller, { [resource]: [action] }))) throw new AuthError(denied);
  }
  return permission;
}

/** Whether any member of the organization holds the role. */
async function assigned(tx: EntityManager, organizationId: string, role: string): Promise<boolean> {
  const rows = await tx.find(Member, { organization: organizationId, role: { $like: `%${role}%` } }, { fields: ["role"], disableIdentityMap: true });
  return rows.some((r) => splitRoles(r.role).includes(role));
}

async function callerWith(app: App, em: EntityManager, auth: ResolvedSession, organizationId: string, action: "create" | "read" | "update" | "delete", denied: ErrorCode) {
  const caller = await requireMembership(em, organizationId, auth.user.id, "YOU_ARE_NOT_A_MEMBER_OF_THIS_ORGANIZATION");
  await assertMemberMay(app, em, caller, { ac: [action] }, denied);
  return caller;
}

async function findRole(em: EntityManager, organizationId: string, ref: { roleName?: string | undefined; roleId?: string | undefined }): Promise<IOrganizationRole> {
  const where = ref.roleId ? (isUuid(ref.roleId) ? { id: ref.roleId } : null) : { role: ref.roleName ?? "" };
  const row = where ? await em.findOne(OrganizationRole, { organization: organizationId, ...where }, { disableIdentityMap: true }) : null;
  if (!row) throw new AuthError("ROLE_NOT_FOUND");
  return row;
}

export async function createRole(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { role: string; permission: Record<string, string[]>; organizationId?: string | undefined }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    const caller = await callerWith(app, tx, auth, organizationId, "create", "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_ROLE");
    if (Object.hasOwn(app.config.organization.roles, input.role)) throw new AuthError("ROLE_NAME_IS_ALREADY_TAKEN");
    const permission = await assertGrantable(app, tx, caller, input.permission, "YOU_ARE_NOT_ALLOWED_TO_CREATE_A_ROLE");
    if ((await tx.count(OrganizationRole, { organization: organizationId })) >= app.config.organization.dynamicAccessControl.maximumRolesPerOrganization) throw new AuthError("TOO_MANY_ROLES");
    const now = app.clock.now();
    const row = { id: uuidv7(now.getTime()), organization: organizationId, role: input.role, permission: JSON.stringify(permission), createdAt: now, updatedAt: now };
    try {
      await tx.insert(OrganizationRole, row);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new AuthError("ROLE_NAME_IS_ALREADY_TAKEN", { cause: err });
      throw err;
    }
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-create-role", targetType: "organization", targetId: organizationId, metadata: { role: input.role, permission } });
    return { success: true as const, roleData: publicRole(row), statements: permission as Record<string, string[]> };
  });
}

export async function updateRole(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { roleName?: string | undefined; roleId?: string | undefined; organizationId?: string | undefined; data: { permission?: Record<string, string[]> | undefined; roleName?: string | undefined } }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    const caller = await callerWith(app, tx, auth, organizationId, "update", "YOU_ARE_NOT_ALLOWED_TO_UPDATE_A_ROLE");
    const role = await findRole(tx, organizationId, input);
    const changes: { permission?: string; role?: string; updatedAt: Date } = { updatedAt: app.clock.now() };
    if (input.data.permission) changes.permission = JSON.stringify(await assertGrantable(app, tx, caller, input.data.permission, "YOU_ARE_NOT_ALLOWED_TO_UPDATE_A_ROLE"));
    if (input.data.roleName && input.data.roleName !== role.role) {
      if (Object.hasOwn(app.config.organization.roles, input.data.roleName)) throw new AuthError("ROLE_NAME_IS_ALREADY_TAKEN");
      if (await assigned(tx, organizationId, role.role)) throw new AuthError("ROLE_IS_ASSIGNED_TO_MEMBERS");
      changes.role = input.data.roleName;
    }
    try {
      await tx.nativeUpdate(OrganizationRole, { id: role.id }, changes);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new AuthError("ROLE_NAME_IS_ALREADY_TAKEN", { cause: err });
      throw err;
    }
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-update-role", targetType: "organization", targetId: organizationId, metadata: { role: role.role, ...(changes.role ? { renamedTo: changes.role } : {}) } });
    return { success: true as const, roleData: publicRole({ ...role, ...changes }) };
  });
}

export async function deleteRole(app: App, em: EntityManager, auth: ResolvedSession, req: RequestInfo, input: { roleName?: string | undefined; roleId?: string | undefined; organizationId?: string | undefined }) {
  const organizationId = targetOrganizationId(auth, input.organizationId);
  return inTransaction(em, async (tx) => {
    await lockOrganization(tx, organizationId);
    await callerWith(app, tx, auth, organizationId, "delete", "YOU_ARE_NOT_ALLOWED_TO_DELETE_A_ROLE");
    if (input.roleName && Object.hasOwn(app.config.organization.roles, input.roleName)) throw new AuthError("CANNOT_DELETE_A_PRE_DEFINED_ROLE");
    const role = await findRole(tx, organizationId, input);
    if (await assigned(tx, organizationId, role.role)) throw new AuthError("ROLE_IS_ASSIGNED_TO_MEMBERS");
    await tx.nativeDelete(OrganizationRole, { id: role.id });
    await recordAudit(tx, app.clock, actorOf(auth, req), { action: "organization-delete-role", targetType: "organization", targetId: organizationId, metadata: { role: role.role } });
    return { success: true as const };
  });
}

export async function listRoles(app: App, em: EntityManager, auth: ResolvedSession, organizationId: string | undefined) {
  const orgId = targetOrganizationId(auth, organizationId);
  await callerWith(app, em, auth, orgId, "read", "YOU_ARE_NOT_ALLOWED_TO_LIST_A_ROLE");
  return (await em.find(OrganizationRole, { organization: orgId }, { orderBy: { createdAt: "asc", id: "asc" }, disableIdentityMap: true })).map(publicRole);
}

export async function getRole(app: App, em: EntityManager, auth: ResolvedSession, input: { roleName?: string | undefined; roleId?: string | undefined; organizationId?: string | undefined }) {
  const orgId = targetOrganizationId(auth, input.organizationId);
  await callerWith(app, em, auth, orgId, "read", "YOU_ARE_NOT_ALLOWED_TO_READ_A_ROLE");
  return publicRole(await findRole(em, orgId, input));
}
