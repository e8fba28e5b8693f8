import { z } from "zod";
import { formBoolean, password, userImage } from "../../trpc/schema.ts";
import { USER_LIST_FIELDS } from "../../db/user-list.ts";

/*
 * Inputs of the admin procedures: better-auth's admin plugin shapes (docs/wire-contract.md §6). GET
 * routes read the query string, where every value is a string: numbers are coerced here.
 */

const userId = z.string().min(1, "is required").max(64);

/** One role, several comma-joined, or a list; every name must be a configured role. */
export const roleValue = z.union([
  z.string().min(1, "is required").max(255),
  z.array(z.string().min(1).max(64)).min(1).max(32),
]);

/** A non-negative integer, also from a query string ("20"). */
const integer = (min: number, max: number) =>
  z
    .union([z.number(), z.string().regex(/^\d{1,10}$/, "must be an integer").transform(Number)])
    .pipe(z.number().int("must be an integer").min(min).max(max));

/** list-users and list-audit-events: default page 100, at most 1000 per call. */
export const LIMIT_DEFAULT = 100;
export const LIMIT_MAX = 1000;
const page = {
  limit: integer(1, LIMIT_MAX).optional(),
  offset: integer(0, 1_000_000_000).optional(),
};

export const getUserInput = z.object({ id: userId });

export const setRoleInput = z.object({ userId, role: roleValue });

/** Extra user fields create-user accepts (better-auth's `data`). */
const createUserData = z
  .object({
    emailVerified: formBoolean.optional(),
    image: userImage,
    username: z.string().max(256).optional(),
    displayUsername: z.string().max(256).optional(),
    role: roleValue.optional(),
  })
  .strict();

export const createUserInput = z.object({
  email: z.string().min(1, "is required").max(1024),
  password: password.optional(),
  name: z.string().max(1024),
  role: roleValue.optional(),
  data: createUserData.optional(),
});

/** What update-user may change; each group needs its permission (see admin.router.ts). */
export const updateUserData = z
  .object({
    name: z.string().max(1024).optional(),
    image: userImage,
    username: z.string().max(256).nullable().optional(),
    displayUsername: z.string().max(256).nullable().optional(),
    email: z.string().min(1).max(1024).optional(),
    emailVerified: z.boolean().optional(),
    role: roleValue.optional(),
    banned: z.boolean().optional(),
    banReason: z.string().max(1000).nullable().optional(),
    banExpires: z.iso.datetime({ offset: true }).nullable().optional(),
    // Accepted only to answer 400 PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER (better-auth's rule).
    password: z.unknown().optional(),
  })
  .strict();

export type UpdateUserData = z.output<typeof updateUserData>;

export const updateUserInput = z.object({ userId, data: updateUserData });

export const userIdInput = z.object({ userId });

export const banUserInput = z.object({
  userId,
  banReason: z.string().max(1000).optional(),
  /** Seconds from now; none: the ban does not expire. */
  banExpiresIn: z.number().int().positive().max(100 * 365 * 24 * 3600).optional(),
});

export const revokeUserSessionInput = z
  .object({
    sessionToken: z.string().min(1).max(512).optional(),
    sessionId: z.string().min(1).max(64).optional(),
    // docs/wire-contract.md §2: revoke-by-token endpoints also accept `{ id }`.
    id: z.string().min(1).max(64).optional(),
  })
  .refine((v) => v.sessionToken !== undefined || v.sessionId !== undefined || v.id !== undefined, {
    message: "sessionToken or sessionId is required",
    path: ["sessionToken"],
  });

export const setUserPasswordInput = z.object({ userId, newPassword: password });

const actionList = z.array(z.string().max(64)).max(64);

/**
 * `{ resource: [action] }`. Not z.record: it drops a `__proto__` key silently, which would turn
 * `{ user: [...], __proto__: [...] }` into a question about `user` alone. Here every own key is
 * kept (as an own property: Object.fromEntries) and, being no known resource, grants nothing.
 */
const permissionMap = z
  .custom<object>((v) => typeof v === "object" && v !== null && !Array.isArray(v), "must be an object")
  .transform((value, ctx) => {
    const entries = Object.entries(value);
    if (entries.length > 64) ctx.addIssue({ code: "custom", message: "has too many resources", input: value });
    for (const [resource, actions] of entries) {
      if (resource.length > 64 || !actionList.safeParse(actions).success) {
        ctx.addIssue({ code: "custom", path: [resource], message: "must be a list of actions", input: actions });
      }
    }
    return Object.fromEntries(entries) as Record<string, string[]>;
  });

/** better-auth takes `permissions`; its older clients send `permission`. */
export const hasPermissionInput = z
  .object({ permissions: permissionMap.optional(), permission: permissionMap.optional() })
  .refine((v) => v.permissions !== undefined || v.permission !== undefined, {
    message: "is required",
    path: ["permissions"],
  });

/** The user columns list-users may search, filter and sort on (nothing else reaches SQL). */
export const USER_FIELDS = USER_LIST_FIELDS;
export type UserField = (typeof USER_FIELDS)[number];
export const FILTER_OPERATORS = ["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "contains", "starts_with", "ends_with"] as const;
export type FilterOperator = (typeof FILTER_OPERATORS)[number];

/**
 * Text that reaches list-users' SQL: MikroORM inlines values into the statement it sends, and
 * SQLite's parser stops at a NUL character (a cut statement, a 500). No email or name holds one.
 */
const sqlText = (max: number) => z.string().max(max).refine((v) => !v.includes("\u0000"), "must not contain NUL characters");

export const listUsersInput = z.object({
  searchValue: sqlText(256).optional(),
  searchField: z.enum(["email", "name"]).optional(),
  searchOperator: z.enum(["contains", "starts_with", "ends_with"]).optional(),
  ...page,
  sortBy: z.enum(USER_FIELDS).optional(),
  sortDirection: z.enum(["asc", "desc"]).optional(),
  filterField: z.enum(USER_FIELDS).optional(),
  filterValue: z
    .union([
      sqlText(1024),
      z.number(),
      z.boolean(),
      z.array(z.union([sqlText(1024), z.number()])).max(100),
    ])
    .optional(),
  filterOperator: z.enum(FILTER_OPERATORS).optional(),
}).default({});

export type ListUsersQuery = z.output<typeof listUsersInput>;

/** The audit log's filters (all optional, combined with AND); ids name users, `userId` matches actor, impersonator or target. */
export const listAuditEventsInput = z
  .object({
    ...page,
    action: z.string().min(1).max(64).optional(),
    actorId: z.string().min(1).max(64).optional(),
    targetId: z.string().min(1).max(64).optional(),
    userId: z.string().min(1).max(64).optional(),
  })
  .default({});

export type AuditQuery = z.output<typeof listAuditEventsInput>;

/** The audit export's filters, time range and cursor (the id of the last event already received). */
export const exportAuditEventsInput = z
  .object({
    action: z.string().min(1).max(64).optional(),
    actorId: z.string().min(1).max(64).optional(),
    targetId: z.string().min(1).max(64).optional(),
    userId: z.string().min(1).max(64).optional(),
    since: z.iso.datetime({ offset: true }).optional(),
    until: z.iso.datetime({ offset: true }).optional(),
    cursor: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, "must be an event id").optional(),
    limit: integer(1, LIMIT_MAX).optional(),
  })
  .default({});

export type AuditExportQuery = z.output<typeof exportAuditEventsInput>;
