import { z } from "zod";
import { roleGrantsSchema, withBuiltInRoles } from "../../core/permissions.ts";

/** The `admin` section of the config (src/config/schema.ts). */
export const adminConfig = z
  .object({
    /** Extra roles (or replacements of the built-in `admin` and `user`), e.g. `{ support: { user: ["list", "get"] } }`. */
    roles: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, "role names cannot hold commas or spaces"), roleGrantsSchema).default({}),
    /** Role of users created by sign-up (and create-user without a role). */
    defaultRole: z.string().min(1).default("user"),
    /** Roles whose holders count as admins: impersonating them needs `user: ["impersonate-admins"]`. */
    adminRoles: z.array(z.string().min(1)).min(1).default(["admin"]),
    /** These users hold every permission of the admin roles, whatever their `role` column says. */
    adminUserIds: z.array(z.string().min(1)).default([]),
    /** Lifetime, in seconds, of an impersonation session. */
    impersonationSessionDuration: z.number().int().positive().max(7 * 24 * 3600).default(3600),
    /** The message of 403 BANNED_USER. */
    bannedUserMessage: z.string().min(1).max(1000).default("You have been banned from this application"),
  })
  .strict()
  .transform((admin) => ({ ...admin, roles: withBuiltInRoles(admin.roles) }))
  .superRefine((admin, ctx) => {
    for (const role of [admin.defaultRole, ...admin.adminRoles]) {
      if (!Object.hasOwn(admin.roles, role)) ctx.addIssue({ code: "custom", message: `role "${role}" is not defined in admin.roles` });
    }
  })
  .prefault({});
