import { z } from "zod";
import { AuthError, type ErrorCode } from "../errors.ts";

/**
 * docs/wire-contract.md §6: every resource and its actions, as better-auth's admin plugin names them,
 * plus `audit` (ours: list-audit-events) and `apiKey` (ours: the admin API-key routes, docs/machine-access.md).
 */
export const STATEMENTS = {
  user: [
    "create",
    "list",
    "set-role",
    "ban",
    "impersonate",
    "impersonate-admins",
    "delete",
    "set-password",
    "set-email",
    "get",
    "update",
  ],
  session: ["list", "revoke", "delete"],
  audit: ["list"],
  apiKey: ["create", "list", "revoke", "verify"],
  // The OpenID provider's clients (docs/oidc-provider.md "Clients"): /admin/oauth2/* (the console's clients page).
  oauthClient: ["create", "list", "update", "delete"],
} as const;

export type Resource = keyof typeof STATEMENTS;
export type Action<R extends Resource> = (typeof STATEMENTS)[R][number];
/** What a role grants, resource by resource. */
export type RoleGrants = { [R in Resource]?: readonly Action<R>[] };
/** A permission request: has-permission's body, or one procedure's requirement. */
export type PermissionRequest = Readonly<Record<string, readonly string[]>>;

/** Config shape of one role: only known resources and actions, so a typo fails at start-up. */
export const roleGrantsSchema = z
  .object({
    user: z.array(z.enum(STATEMENTS.user)).optional(),
    session: z.array(z.enum(STATEMENTS.session)).optional(),
    audit: z.array(z.enum(STATEMENTS.audit)).optional(),
    apiKey: z.array(z.enum(STATEMENTS.apiKey)).optional(),
    oauthClient: z.array(z.enum(STATEMENTS.oauthClient)).optional(),
  })
  .strict();

/** `admin`: everything but impersonating other admins; `user`: nothing. */
export const BUILT_IN_ROLES: Readonly<Record<string, RoleGrants>> = {
  admin: {
    user: STATEMENTS.user.filter((a) => a !== "impersonate-admins"),
    session: STATEMENTS.session,
    audit: STATEMENTS.audit,
    apiKey: STATEMENTS.apiKey,
    oauthClient: STATEMENTS.oauthClient,
  },
  user: {},
};

/**
 * Operator roles replace a built-in role of the same name whole (no per-resource merge surprises).
 * A null-prototype map: a role named `constructor` or `toString` is only ever an own entry.
 */
export function withBuiltInRoles(roles: Record<string, RoleGrants>): Record<string, RoleGrants> {
  return Object.assign(Object.create(null) as Record<string, RoleGrants>, BUILT_IN_ROLES, roles);
}

/** The resolved `admin` config section this module reads. */
export interface AdminSettings {
  roles: Record<string, RoleGrants>;
  defaultRole: string;
  adminRoles: string[];
  adminUserIds: string[];
}

interface Subject {
  id: string;
  role: string | null;
}

/** A user's roles: the comma-joined `role` column, plus the admin roles for `adminUserIds`. */
export function rolesOf(settings: AdminSettings, user: Subject): string[] {
  const roles = splitRoles(user.role || settings.defaultRole);
  if (settings.adminUserIds.includes(user.id)) roles.push(...settings.adminRoles);
  return roles;
}

/** Resources and actions are client input: own entries only (`constructor`, `__proto__` grant nothing). */
function grants(role: Grants, request: PermissionRequest): boolean {
  const entries = Object.entries(request);
  if (entries.length === 0) return false;
  return entries.every(([resource, actions]) => {
    const allowed = Object.hasOwn(role, resource) ? (role as Record<string, unknown>)[resource] : undefined;
    return Array.isArray(allowed) && actions.length > 0 && actions.every((a) => allowed.includes(a));
  });
}

/**
 * Passes when ONE of the user's roles grants every requested action (better-auth's rule):
 * permissions do not add up across roles.
 */
export function hasPermission(settings: AdminSettings, user: Subject, request: PermissionRequest): boolean {
  return rolesGrant(settings.roles, rolesOf(settings, user), request);
}

/** What any role grants, resource by resource: the admin roles, an organization's roles (configured or dynamic). */
export type Grants = Readonly<Record<string, readonly string[]>>;

/**
 * THE permission check, for admin roles and organization roles alike: passes when ONE of `names`
 * is a role of `roles` (own entries only) that grants every requested action (better-auth's
 * rule). `extra` resolves a name `roles` lacks (an organization's dynamic roles).
 */
export function rolesGrant(roles: Readonly<Record<string, Grants>>, names: readonly string[], request: PermissionRequest, extra?: (name: string) => Grants | undefined): boolean {
  return names.some((name) => {
    const role = Object.hasOwn(roles, name) ? roles[name] : extra?.(name);
    return role !== undefined && grants(role, request);
  });
}

/**
 * Organization roles (better-auth's organization plugin, docs/organizations.md): its resources and
 * actions, and its built-in `owner`, `admin` and `member` with the plugin's default grants.
 */
export const ORGANIZATION_STATEMENTS = {
  organization: ["update", "delete"],
  member: ["create", "update", "delete"],
  invitation: ["create", "cancel"],
  team: ["create", "update", "delete"],
  ac: ["create", "read", "update", "delete"],
} as const;

export type OrganizationResource = keyof typeof ORGANIZATION_STATEMENTS;

/** Config and dynamic-role shape of one organization role: only known resources and actions. */
export const organizationGrantsSchema = z
  .object({
    organization: z.array(z.enum(ORGANIZATION_STATEMENTS.organization)).optional(),
    member: z.array(z.enum(ORGANIZATION_STATEMENTS.member)).optional(),
    invitation: z.array(z.enum(ORGANIZATION_STATEMENTS.invitation)).optional(),
    team: z.array(z.enum(ORGANIZATION_STATEMENTS.team)).optional(),
    ac: z.array(z.enum(ORGANIZATION_STATEMENTS.ac)).optional(),
  })
  .strict();

export const BUILT_IN_ORGANIZATION_ROLES: Readonly<Record<string, Grants>> = {
  owner: ORGANIZATION_STATEMENTS,
  admin: { ...ORGANIZATION_STATEMENTS, organization: ["update"] },
  member: { ac: ["read"] },
};

/** Operator organization roles replace a built-in one of the same name whole; a null-prototype map (withBuiltInRoles). */
export function withBuiltInOrganizationRoles(roles: Record<string, Grants>): Record<string, Grants> {
  return Object.assign(Object.create(null) as Record<string, Grants>, BUILT_IN_ORGANIZATION_ROLES, roles);
}

/** A comma-joined role column (users' and members' alike) as role names. */
export function splitRoles(role: string): string[] {
  return role
    .split(",")
    .map((r) => r.trim())
    .filter(Boolean);
}

/** Whether a user counts as an admin (impersonating one needs `impersonate-admins`). */
export function isAdminUser(settings: AdminSettings, user: Subject): boolean {
  return rolesOf(settings, user).some((r) => settings.adminRoles.includes(r));
}

/** better-auth's 403 code for each missing permission. */
const DENIED: { [R in Resource]: Record<Action<R>, ErrorCode> } = {
  user: {
    create: "YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS",
    list: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS",
    "set-role": "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE",
    ban: "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS",
    impersonate: "YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS",
    "impersonate-admins": "YOU_CANNOT_IMPERSONATE_ADMINS",
    delete: "YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS",
    "set-password": "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD",
    "set-email": "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL",
    get: "YOU_ARE_NOT_ALLOWED_TO_GET_USER",
    update: "YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS",
  },
  session: {
    list: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS",
    revoke: "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS",
    delete: "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS",
  },
  audit: { list: "YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS" },
  apiKey: {
    create: "YOU_ARE_NOT_ALLOWED_TO_CREATE_API_KEYS",
    list: "YOU_ARE_NOT_ALLOWED_TO_LIST_API_KEYS",
    revoke: "YOU_ARE_NOT_ALLOWED_TO_REVOKE_API_KEYS",
    verify: "YOU_ARE_NOT_ALLOWED_TO_VERIFY_API_KEYS",
  },
  oauthClient: {
    create: "YOU_ARE_NOT_ALLOWED_TO_CREATE_OAUTH_CLIENTS",
    list: "YOU_ARE_NOT_ALLOWED_TO_LIST_OAUTH_CLIENTS",
    update: "YOU_ARE_NOT_ALLOWED_TO_UPDATE_OAUTH_CLIENTS",
    delete: "YOU_ARE_NOT_ALLOWED_TO_DELETE_OAUTH_CLIENTS",
  },
};

/** Throws the 403 of the first action the user's roles do not grant. */
export function assertPermission<R extends Resource>(
  settings: AdminSettings,
  user: Subject,
  resource: R,
  actions: readonly Action<R>[],
): void {
  if (hasPermission(settings, user, { [resource]: actions })) return;
  const denied = actions.find((a) => !hasPermission(settings, user, { [resource]: [a] })) ?? actions[0]!;
  throw new AuthError((DENIED[resource] as Record<string, ErrorCode>)[denied]!);
}
