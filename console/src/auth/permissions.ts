import { api } from "../api.ts";

/**
 * Every action the console offers, as `resource:action` (src/core/permissions.ts). The
 * console asks the server (has-permission) which of them the signed-in admin's roles grant and
 * hides the rest; the server refuses them anyway.
 */
export const PERMISSIONS = [
  "user:list",
  "user:get",
  "user:create",
  "user:set-role",
  "user:ban",
  "user:impersonate",
  "user:delete",
  "user:set-password",
  "user:update",
  "session:list",
  "session:revoke",
  "audit:list",
  "apiKey:list",
  "apiKey:revoke",
  "oauthClient:list",
  "oauthClient:create",
  "oauthClient:update",
  "oauthClient:delete",
] as const;

export type Permission = (typeof PERMISSIONS)[number];

/** One has-permission call per action: a role may grant any subset, so each is asked alone. */
export async function loadPermissions(): Promise<ReadonlySet<Permission>> {
  const granted = await Promise.all(
    PERMISSIONS.map(async (permission) => {
      const [resource, action] = permission.split(":") as [string, string];
      const answer = await api.admin.hasPermission.mutate({ permissions: { [resource]: [action] } });
      return answer.success ? permission : null;
    }),
  );
  return new Set(granted.filter((p): p is Permission => p !== null));
}
