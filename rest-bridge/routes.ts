import type { AppRouter } from "../src/trpc/app-router.ts";

/**
 * THE table: every REST path under the base path, the procedure it calls, where its input
 * comes from. A route is one line; the HTTP guards (origin, rate limit, body) live in server.ts,
 * and who may call it is the procedure's (its builder's meta, src/trpc/init.ts: shown per route
 * in docs/http-api.md, `npm run docs`). `procedure` is checked by tsc against the router.
 */
type ProcedurePaths<R, P extends string = ""> = {
  [K in keyof R & string]: R[K] extends { _def: { procedure: true } } ? `${P}${K}` : R[K] extends object ? ProcedurePaths<R[K], `${P}${K}.`> : never;
}[keyof R & string];

/** Every procedure of the router, dotted (`signIn.email`). */
export type ProcedurePath = ProcedurePaths<AppRouter["_def"]["record"]>;

export interface Route {
  method: "GET" | "POST";
  /** Below the base path; `:name` segments become input fields. */
  path: string;
  /** Dotted tRPC procedure path. */
  procedure: ProcedurePath;
  /** `body+query`: the body's fields, the query's on top (better-auth's form_post callback: the query's state wins). */
  input: "none" | "body" | "query" | "body+query";
  /** Also accepts application/x-www-form-urlencoded (docs/wire-contract.md §1). */
  form?: boolean;
  /** Starts a sign-in: refused from a foreign page even without a cookie (guards.ts checkLoginOrigin). */
  login?: boolean;
  /** The procedure answers a string written as text/html with a script-free CSP (html.ts). */
  html?: boolean;
  /** A paged procedure (`{ events, nextCursor }`) whose pages stream as NDJSON, page after page (ndjson.ts). */
  ndjson?: boolean;
  /** A browser navigation (Accept prefers text/html) gets its failure as a 302 to `/error?error=CODE`, not JSON (docs/wire-contract.md §9). */
  errorPage?: boolean;
  /**
   * A browser navigation that a page elsewhere may legitimately send, doing no more than its GET
   * does (OIDC Core §3.1.2.1: the authorization endpoint takes POST too): no §3 origin rule.
   */
  navigation?: boolean;
}

export const routes: readonly Route[] = [
  { method: "POST", path: "/sign-up/email", procedure: "signUp.email", input: "body", form: true, login: true },
  { method: "POST", path: "/sign-in/email", procedure: "signIn.email", input: "body", form: true, login: true },
  { method: "POST", path: "/sign-in/username", procedure: "signIn.username", input: "body", login: true },
  { method: "POST", path: "/is-username-available", procedure: "isUsernameAvailable", input: "body" },
  { method: "GET", path: "/get-session", procedure: "getSession", input: "none" },
  { method: "POST", path: "/sign-out", procedure: "signOut", input: "none" },
  { method: "GET", path: "/list-sessions", procedure: "listSessions", input: "none" },
  { method: "POST", path: "/revoke-session", procedure: "revokeSession", input: "body" },
  { method: "POST", path: "/revoke-sessions", procedure: "revokeSessions", input: "none" },
  { method: "POST", path: "/revoke-other-sessions", procedure: "revokeOtherSessions", input: "none" },
  { method: "POST", path: "/update-user", procedure: "updateUser", input: "body" },
  { method: "POST", path: "/change-password", procedure: "changePassword", input: "body" },
  { method: "POST", path: "/verify-password", procedure: "verifyPassword", input: "body" },
  { method: "POST", path: "/change-email", procedure: "changeEmail", input: "body" },
  { method: "POST", path: "/delete-user", procedure: "deleteUser", input: "body" },
  { method: "GET", path: "/delete-user/callback", procedure: "deleteUserCallback", input: "query" },
  { method: "POST", path: "/send-verification-email", procedure: "sendVerificationEmail", input: "body" },
  { method: "GET", path: "/verify-email", procedure: "verifyEmail", input: "query" },
  { method: "POST", path: "/request-password-reset", procedure: "requestPasswordReset", input: "body" },
  { method: "GET", path: "/reset-password/:token", procedure: "resetPasswordCallback", input: "query" },
  { method: "POST", path: "/reset-password", procedure: "resetPassword", input: "body" },
  { method: "POST", path: "/device/code", procedure: "device.code", input: "body", form: true },
  { method: "POST", path: "/device/token", procedure: "device.token", input: "body", form: true },
  { method: "GET", path: "/device", procedure: "device.verify", input: "query" },
  { method: "POST", path: "/device/approve", procedure: "device.approve", input: "body" },
  { method: "POST", path: "/device/deny", procedure: "device.deny", input: "body" },
  { method: "POST", path: "/admin/create-user", procedure: "admin.createUser", input: "body" },
  { method: "GET", path: "/admin/get-user", procedure: "admin.getUser", input: "query" },
  { method: "POST", path: "/admin/update-user", procedure: "admin.updateUser", input: "body" },
  { method: "POST", path: "/admin/set-role", procedure: "admin.setRole", input: "body" },
  { method: "GET", path: "/admin/list-users", procedure: "admin.listUsers", input: "query" },
  { method: "POST", path: "/admin/set-user-password", procedure: "admin.setUserPassword", input: "body" },
  { method: "POST", path: "/admin/remove-user", procedure: "admin.removeUser", input: "body" },
  { method: "POST", path: "/admin/ban-user", procedure: "admin.banUser", input: "body" },
  { method: "POST", path: "/admin/unban-user", procedure: "admin.unbanUser", input: "body" },
  { method: "POST", path: "/admin/impersonate-user", procedure: "admin.impersonateUser", input: "body" },
  { method: "POST", path: "/admin/stop-impersonating", procedure: "admin.stopImpersonating", input: "none" },
  { method: "POST", path: "/admin/list-user-sessions", procedure: "admin.listUserSessions", input: "body" },
  { method: "POST", path: "/admin/revoke-user-session", procedure: "admin.revokeUserSession", input: "body" },
  { method: "POST", path: "/admin/revoke-user-sessions", procedure: "admin.revokeUserSessions", input: "body" },
  { method: "POST", path: "/admin/has-permission", procedure: "admin.hasPermission", input: "body" },
  { method: "GET", path: "/admin/list-audit-events", procedure: "admin.listAuditEvents", input: "query" },
  { method: "GET", path: "/admin/export-audit-events", procedure: "admin.exportAuditEvents", input: "query", ndjson: true },
  { method: "POST", path: "/sign-in/social", procedure: "signIn.social", input: "body", login: true },
  { method: "GET", path: "/callback/:provider", procedure: "callback", input: "query", errorPage: true },
  { method: "POST", path: "/callback/:provider", procedure: "callbackPost", input: "body+query", form: true, errorPage: true },
  { method: "GET", path: "/error", procedure: "errorPage", input: "query", html: true },
  { method: "POST", path: "/link-social", procedure: "linkSocial", input: "body" },
  { method: "POST", path: "/get-access-token", procedure: "getAccessToken", input: "body" },
  { method: "POST", path: "/refresh-token", procedure: "refreshToken", input: "body" },
  { method: "GET", path: "/account-info", procedure: "accountInfo", input: "query" },
  { method: "GET", path: "/list-accounts", procedure: "listAccounts", input: "none" },
  { method: "POST", path: "/unlink-account", procedure: "unlinkAccount", input: "body" },
  // two-factor (src/modules/two-factor)
  { method: "POST", path: "/two-factor/enable", procedure: "twoFactor.enable", input: "body" },
  { method: "POST", path: "/two-factor/disable", procedure: "twoFactor.disable", input: "body" },
  { method: "POST", path: "/two-factor/get-totp-uri", procedure: "twoFactor.getTotpUri", input: "body" },
  { method: "POST", path: "/two-factor/generate-backup-codes", procedure: "twoFactor.generateBackupCodes", input: "body" },
  { method: "POST", path: "/two-factor/verify-totp", procedure: "twoFactor.verifyTotp", input: "body" },
  { method: "POST", path: "/two-factor/send-otp", procedure: "twoFactor.sendOtp", input: "body" },
  { method: "POST", path: "/two-factor/verify-otp", procedure: "twoFactor.verifyOtp", input: "body" },
  { method: "POST", path: "/two-factor/verify-backup-code", procedure: "twoFactor.verifyBackupCode", input: "body" },
  { method: "POST", path: "/admin/reset-two-factor", procedure: "admin.resetTwoFactor", input: "body" },
  // passkey (src/modules/passkey)
  { method: "GET", path: "/passkey/generate-register-options", procedure: "passkey.generateRegisterOptions", input: "query" },
  { method: "POST", path: "/passkey/verify-registration", procedure: "passkey.verifyRegistration", input: "body" },
  // better-auth's passkeyClient asks with GET; the issue (and better-auth's docs) name POST: both.
  { method: "GET", path: "/passkey/generate-authenticate-options", procedure: "passkey.generateAuthenticateOptions", input: "query" },
  { method: "POST", path: "/passkey/generate-authenticate-options", procedure: "passkey.generateAuthenticateOptions", input: "body" },
  { method: "POST", path: "/passkey/verify-authentication", procedure: "passkey.verifyAuthentication", input: "body", login: true },
  { method: "GET", path: "/passkey/list-user-passkeys", procedure: "passkey.listUserPasskeys", input: "none" },
  { method: "POST", path: "/passkey/delete-passkey", procedure: "passkey.deletePasskey", input: "body" },
  { method: "POST", path: "/passkey/update-passkey", procedure: "passkey.updatePasskey", input: "body" },
  // jwt (src/modules/jwt)
  { method: "GET", path: "/token", procedure: "token", input: "none" },
  { method: "GET", path: "/jwks", procedure: "jwks", input: "none" },
  // magic-link (src/modules/magic-link)
  { method: "POST", path: "/sign-in/magic-link", procedure: "signIn.magicLink", input: "body", login: true },
  { method: "GET", path: "/magic-link/verify", procedure: "magicLink.verify", input: "query", errorPage: true },
  { method: "POST", path: "/magic-link/verify", procedure: "magicLink.confirm", input: "body", form: true, login: true, errorPage: true },
  // organization (src/modules/organization)
  { method: "POST", path: "/organization/create", procedure: "organization.create", input: "body" },
  { method: "POST", path: "/organization/update", procedure: "organization.update", input: "body" },
  { method: "POST", path: "/organization/delete", procedure: "organization.delete", input: "body" },
  { method: "GET", path: "/organization/get-full-organization", procedure: "organization.getFullOrganization", input: "query" },
  { method: "GET", path: "/organization/list", procedure: "organization.list", input: "none" },
  { method: "POST", path: "/organization/check-slug", procedure: "organization.checkSlug", input: "body" },
  { method: "POST", path: "/organization/set-active", procedure: "organization.setActive", input: "body" },
  { method: "GET", path: "/organization/list-members", procedure: "organization.listMembers", input: "query" },
  { method: "POST", path: "/organization/add-member", procedure: "organization.addMember", input: "body" },
  { method: "POST", path: "/organization/remove-member", procedure: "organization.removeMember", input: "body" },
  { method: "POST", path: "/organization/update-member-role", procedure: "organization.updateMemberRole", input: "body" },
  { method: "POST", path: "/organization/leave", procedure: "organization.leave", input: "body" },
  { method: "GET", path: "/organization/get-active-member", procedure: "organization.getActiveMember", input: "none" },
  { method: "GET", path: "/organization/get-active-member-role", procedure: "organization.getActiveMemberRole", input: "query" },
  { method: "POST", path: "/organization/has-permission", procedure: "organization.hasPermission", input: "body" },
  { method: "POST", path: "/organization/invite-member", procedure: "organization.inviteMember", input: "body" },
  { method: "POST", path: "/organization/accept-invitation", procedure: "organization.acceptInvitation", input: "body" },
  { method: "POST", path: "/organization/reject-invitation", procedure: "organization.rejectInvitation", input: "body" },
  { method: "POST", path: "/organization/cancel-invitation", procedure: "organization.cancelInvitation", input: "body" },
  { method: "GET", path: "/organization/get-invitation", procedure: "organization.getInvitation", input: "query" },
  { method: "GET", path: "/organization/list-invitations", procedure: "organization.listInvitations", input: "query" },
  { method: "GET", path: "/organization/list-user-invitations", procedure: "organization.listUserInvitations", input: "none" },
  { method: "POST", path: "/organization/create-team", procedure: "organization.createTeam", input: "body" },
  { method: "GET", path: "/organization/list-teams", procedure: "organization.listTeams", input: "query" },
  { method: "POST", path: "/organization/update-team", procedure: "organization.updateTeam", input: "body" },
  { method: "POST", path: "/organization/remove-team", procedure: "organization.removeTeam", input: "body" },
  { method: "POST", path: "/organization/add-team-member", procedure: "organization.addTeamMember", input: "body" },
  { method: "POST", path: "/organization/remove-team-member", procedure: "organization.removeTeamMember", input: "body" },
  { method: "GET", path: "/organization/list-team-members", procedure: "organization.listTeamMembers", input: "query" },
  { method: "POST", path: "/organization/set-active-team", procedure: "organization.setActiveTeam", input: "body" },
  { method: "GET", path: "/organization/list-user-teams", procedure: "organization.listUserTeams", input: "none" },
  { method: "POST", path: "/organization/create-role", procedure: "organization.createRole", input: "body" },
  { method: "POST", path: "/organization/update-role", procedure: "organization.updateRole", input: "body" },
  { method: "POST", path: "/organization/delete-role", procedure: "organization.deleteRole", input: "body" },
  { method: "GET", path: "/organization/list-roles", procedure: "organization.listRoles", input: "query" },
  { method: "GET", path: "/organization/get-role", procedure: "organization.getRole", input: "query" },
  { method: "GET", path: "/admin/list-user-organizations", procedure: "admin.listUserOrganizations", input: "query" },
  { method: "GET", path: "/admin/list-organizations", procedure: "admin.listOrganizations", input: "query" },
  { method: "GET", path: "/admin/get-organization", procedure: "admin.getOrganization", input: "query" },
  // email-otp (src/modules/email-otp)
  { method: "POST", path: "/email-otp/send-verification-otp", procedure: "emailOtp.sendVerificationOtp", input: "body", login: true },
  { method: "POST", path: "/email-otp/check-verification-otp", procedure: "emailOtp.checkVerificationOtp", input: "body" },
  { method: "POST", path: "/email-otp/verify-email", procedure: "emailOtp.verifyEmail", input: "body" },
  { method: "POST", path: "/sign-in/email-otp", procedure: "signIn.emailOtp", input: "body", login: true },
  { method: "POST", path: "/email-otp/request-password-reset", procedure: "emailOtp.requestPasswordReset", input: "body" },
  { method: "POST", path: "/forget-password/email-otp", procedure: "forgetPassword.emailOtp", input: "body" },
  { method: "POST", path: "/email-otp/reset-password", procedure: "emailOtp.resetPassword", input: "body" },
  // api-key (src/modules/api-key)
  { method: "POST", path: "/api-key/create", procedure: "apiKey.create", input: "body" },
  { method: "GET", path: "/api-key/get", procedure: "apiKey.get", input: "query" },
  { method: "GET", path: "/api-key/list", procedure: "apiKey.list", input: "query" },
  { method: "POST", path: "/api-key/update", procedure: "apiKey.update", input: "body" },
  { method: "POST", path: "/api-key/delete", procedure: "apiKey.delete", input: "body" },
  { method: "POST", path: "/api-key/verify", procedure: "apiKey.verify", input: "body" },
  { method: "POST", path: "/admin/create-api-key", procedure: "admin.createApiKey", input: "body" },
  { method: "GET", path: "/admin/list-api-keys", procedure: "admin.listApiKeys", input: "query" },
  { method: "POST", path: "/admin/revoke-api-key", procedure: "admin.revokeApiKey", input: "body" },
  // oidc-provider (src/modules/oidc-provider)
  { method: "GET", path: "/.well-known/openid-configuration", procedure: "oauth2.openidConfiguration", input: "none" },
  { method: "GET", path: "/.well-known/oauth-authorization-server", procedure: "oauth2.authorizationServer", input: "none" },
  { method: "GET", path: "/oauth2/authorize", procedure: "oauth2.authorize", input: "query", errorPage: true },
  { method: "POST", path: "/oauth2/authorize", procedure: "oauth2.authorize", input: "body", form: true, errorPage: true, navigation: true },
  { method: "POST", path: "/oauth2/consent", procedure: "oauth2.consent", input: "body" },
  { method: "POST", path: "/oauth2/continue", procedure: "oauth2.continue", input: "body" },
  { method: "POST", path: "/oauth2/token", procedure: "oauth2.token", input: "body", form: true },
  { method: "GET", path: "/oauth2/userinfo", procedure: "oauth2.userinfo", input: "query" },
  { method: "POST", path: "/oauth2/userinfo", procedure: "oauth2.userinfo", input: "body", form: true },
  { method: "POST", path: "/oauth2/introspect", procedure: "oauth2.introspect", input: "body", form: true },
  { method: "POST", path: "/oauth2/revoke", procedure: "oauth2.revoke", input: "body", form: true },
  { method: "GET", path: "/oauth2/end-session", procedure: "oauth2.endSession", input: "query", errorPage: true },
  { method: "POST", path: "/oauth2/register", procedure: "oauth2.register", input: "body" },
  { method: "POST", path: "/oauth2/create-client", procedure: "oauth2.createClient", input: "body" },
  { method: "GET", path: "/oauth2/get-client", procedure: "oauth2.getClient", input: "query" },
  { method: "GET", path: "/oauth2/get-clients", procedure: "oauth2.getClients", input: "none" },
  { method: "POST", path: "/oauth2/update-client", procedure: "oauth2.updateClient", input: "body" },
  { method: "POST", path: "/oauth2/delete-client", procedure: "oauth2.deleteClient", input: "body" },
  { method: "POST", path: "/oauth2/client/rotate-secret", procedure: "oauth2.client.rotateSecret", input: "body" },
  { method: "GET", path: "/oauth2/get-consent", procedure: "oauth2.getConsent", input: "query" },
  { method: "GET", path: "/oauth2/get-consents", procedure: "oauth2.getConsents", input: "none" },
  { method: "POST", path: "/oauth2/update-consent", procedure: "oauth2.updateConsent", input: "body" },
  { method: "POST", path: "/oauth2/delete-consent", procedure: "oauth2.deleteConsent", input: "body" },
  // better-auth answers these two server-side only (its update is a PATCH): here HTTP routes under the `oauthClient` permission.
  { method: "POST", path: "/admin/oauth2/create-client", procedure: "admin.oauth2.createClient", input: "body" },
  { method: "POST", path: "/admin/oauth2/update-client", procedure: "admin.oauth2.updateClient", input: "body" },
  // Ours (the console's clients page): any client, under the `oauthClient` permission.
  { method: "GET", path: "/admin/oauth2/list-clients", procedure: "admin.oauth2.listClients", input: "query" },
  { method: "GET", path: "/admin/oauth2/get-client", procedure: "admin.oauth2.getClient", input: "query" },
  { method: "POST", path: "/admin/oauth2/client/rotate-secret", procedure: "admin.oauth2.rotateSecret", input: "body" },
  { method: "POST", path: "/admin/oauth2/delete-client", procedure: "admin.oauth2.deleteClient", input: "body" },
  { method: "GET", path: "/admin/oauth2/get-client-consents", procedure: "admin.oauth2.getClientConsents", input: "query" },
  { method: "GET", path: "/oauth2/public-client", procedure: "oauth2.publicClient", input: "query" },
  { method: "GET", path: "/ok", procedure: "ok", input: "none" },
  { method: "GET", path: "/ready", procedure: "ready", input: "none" },
];

export interface RouteMatch {
  route: Route;
  params: Record<string, string>;
}

interface Compiled {
  route: Route;
  segments: string[];
}

export function createRouteMatcher(table: readonly Route[]) {
  const exact = new Map<string, Route>();
  const dynamic: Compiled[] = [];
  for (const route of table) {
    if (route.path.includes("/:")) dynamic.push({ route, segments: route.path.split("/") });
    else exact.set(`${route.method} ${route.path}`, route);
  }
  return function match(method: string, path: string): RouteMatch | null {
    const hit = exact.get(`${method} ${path}`);
    if (hit) return { route: hit, params: {} };
    const parts = path.split("/");
    for (const { route, segments } of dynamic) {
      if (route.method !== method || segments.length !== parts.length) continue;
      const params: Record<string, string> = {};
      // `path` is already decoded (paths.ts normalisePath): a parameter is taken as is, never decoded twice.
      const ok = segments.every((seg, i) => {
        const part = parts[i]!;
        if (!seg.startsWith(":")) return seg === part;
        params[seg.slice(1)] = part;
        return part !== "";
      });
      if (ok) return { route, params };
    }
    return null;
  };
}

/** tRPC procedure → REST path, so /api/trpc calls share the bridge's rate-limit rules. */
export const restPathByProcedure: ReadonlyMap<string, string> = new Map(routes.map((r) => [r.procedure, r.path]));

/** Procedures of the routes marked `login`, for their tRPC forms. */
export const loginProcedures: ReadonlySet<string> = new Set(routes.filter((r) => r.login).map((r) => r.procedure));
