import { z } from "zod";
import { moduleDoc, requireOneOf, type JsonSchema } from "../../openapi/doc.ts";
import { sessionAnswer, sessionWithToken, userRecord } from "../../openapi/records.ts";

const wrapped = z.object({ user: userRecord });
const done = z.object({ success: z.literal(true) });
const USER_RULES = ["INVALID_EMAIL", "USERNAME_TOO_SHORT", "USERNAME_TOO_LONG", "INVALID_USERNAME", "USER_ALREADY_EXISTS", "USERNAME_IS_ALREADY_TAKEN"] as const;

/** has-permission's maps are checked by a z.custom (admin.schema.ts): written out here. */
function permissionMaps(schema: JsonSchema) {
  const map = { type: "object", additionalProperties: { type: "array", items: { type: "string", maxLength: 64 }, maxItems: 64 }, description: "resource → actions" };
  schema.properties = { permissions: map, permission: { ...map, description: "Older clients' name for `permissions`" } };
  requireOneOf("permissions", "permission")(schema);
}

/** OpenAPI docs of admin.router.ts (src/openapi/doc.ts): better-auth's admin plugin shapes (docs/wire-contract.md §6). */
/** One audit record, as list-audit-events and the export answer it. */
const auditEvent = z.object({
    id: z.string(),
    actorId: z.string().nullable(),
    impersonatorId: z.string().nullable(),
    action: z.string(),
    targetType: z.string(),
    targetId: z.string().nullable(),
    ip: z.string().nullable(),
    userAgent: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    createdAt: z.iso.datetime({ offset: true }),
  });

export const adminDoc = moduleDoc({
  tag: "Admin",
  description: "Users, roles, bans, impersonation and sessions, for roles that hold the permissions. Every action is audited.",
  operations: {
    "admin.createUser": {
      summary: "Create a user",
      access: "session",
      output: wrapped,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS", "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE"],
      errors: [...USER_RULES, "PASSWORD_TOO_SHORT", "PASSWORD_TOO_LONG", "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE"],
    },
    "admin.getUser": {
      summary: "Get a user",
      access: "session",
      output: userRecord,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_GET_USER"],
      errors: ["USER_NOT_FOUND"],
    },
    "admin.updateUser": {
      summary: "Update a user",
      description: "Changing the role, the email or the ban also needs those permissions.",
      access: "session",
      output: userRecord,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS", "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE", "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL", "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"],
      errors: [...USER_RULES, "NO_DATA_TO_UPDATE", "PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER", "YOU_CANNOT_BAN_YOURSELF", "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE", "USER_NOT_FOUND"],
    },
    "admin.setRole": {
      summary: "Set a user's role",
      access: "session",
      output: wrapped,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE"],
      errors: ["YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE", "USER_NOT_FOUND"],
    },
    "admin.listUsers": {
      summary: "List users",
      description: "Search, filter, sort and page (offset); at most 1000 per call.",
      access: "session",
      output: z.object({ users: z.array(userRecord), total: z.number(), limit: z.number(), offset: z.number() }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_USERS"],
    },
    "admin.setUserPassword": {
      summary: "Set a user's password",
      access: "session",
      output: z.object({ status: z.literal(true) }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD"],
      errors: ["PASSWORD_TOO_SHORT", "PASSWORD_TOO_LONG", "USER_NOT_FOUND", "API_KEY_SESSION_NOT_ALLOWED"],
    },
    "admin.removeUser": {
      summary: "Delete a user",
      access: "session",
      output: done,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS"],
      errors: ["YOU_CANNOT_REMOVE_YOURSELF", "USER_NOT_FOUND"],
    },
    "admin.banUser": {
      summary: "Ban a user",
      description: "Ends every session of the user; `banExpiresIn` in seconds (none: no expiry).",
      access: "session",
      output: wrapped,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"],
      errors: ["YOU_CANNOT_BAN_YOURSELF", "USER_NOT_FOUND"],
    },
    "admin.unbanUser": {
      summary: "Lift a ban",
      access: "session",
      output: wrapped,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_BAN_USERS"],
      errors: ["USER_NOT_FOUND"],
    },
    "admin.impersonateUser": {
      summary: "Impersonate a user",
      description: "A 1-hour session as the user (`session.token`, cookie, `set-auth-token`); the admin's own session is kept in the `admin_session` cookie.",
      access: "session",
      output: z.object({ session: sessionWithToken, user: userRecord }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS", "YOU_CANNOT_IMPERSONATE_ADMINS"],
      errors: ["USER_NOT_FOUND", "BANNED_USER", "API_KEY_SESSION_NOT_ALLOWED"],
    },
    "admin.stopImpersonating": {
      summary: "Stop impersonating",
      description: "Answers the admin's own session, restored from the `admin_session` cookie, or `null` when the request carried none (a bearer client).",
      access: "session",
      output: sessionAnswer.nullable(),
      errors: ["NOT_IMPERSONATING"],
    },
    "admin.listUserSessions": {
      summary: "List a user's sessions",
      access: "session",
      output: z.object({ sessions: z.array(sessionWithToken) }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS"],
    },
    "admin.revokeUserSession": {
      summary: "Revoke one session",
      description: "By `sessionToken` (a listing's token or handle), `sessionId` or `id`.",
      access: "session",
      output: done,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"],
      errors: ["SESSION_NOT_FOUND"],
      input: requireOneOf("sessionToken", "sessionId", "id"),
    },
    "admin.revokeUserSessions": {
      summary: "Revoke all a user's sessions",
      access: "session",
      output: done,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS"],
    },
    "admin.hasPermission": {
      summary: "Does the caller hold these permissions",
      description: "`success` is true when one of the caller's roles grants every action asked for.",
      access: "session",
      output: z.object({ success: z.boolean(), error: z.null() }),
      input: permissionMaps,
    },
    "admin.listAuditEvents": {
      summary: "The audit log, newest first",
      access: "session",
      output: z.object({
        events: z.array(auditEvent),
        total: z.number(),
        limit: z.number(),
        offset: z.number(),
      }),
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS"],
    },
    "admin.exportAuditEvents": {
      summary: "Export the audit log: NDJSON, oldest first, from a cursor",
      description:
        "REST streams every matching event after `cursor` as `application/x-ndjson`, one event per line (the shape below, " +
        "`events[]`), page after page until none is left; resume from the last line's `id` as `cursor`. Filters as " +
        "list-audit-events, plus `since` (inclusive) and `until` (exclusive) ISO dates. tRPC callers read one page of " +
        "`limit` (default and at most 1000) with `nextCursor` (null: nothing more yet). docs/operations.md \"Audit\".",
      access: "session",
      output: z.object({ events: z.array(auditEvent), nextCursor: z.string().nullable() }),
      ndjsonItem: auditEvent,
      permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS"],
    },
  },
});
