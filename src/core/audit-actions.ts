/**
 * Every action the audit trail records: a closed list, so a record's `action` is always one of
 * these and the admin console offers exactly these as filters (console/src/audit). A family that
 * audits something new adds its actions here. A leaf file: the console imports it too.
 */
export const AUDIT_ACTIONS = [
  "create-admin",
  "create-user",
  "update-user",
  "set-role",
  "set-user-password",
  "reset-two-factor",
  "ban-user",
  "unban-user",
  "impersonate-user",
  "stop-impersonating",
  "revoke-user-session",
  "revoke-user-sessions",
  "remove-user",
  "delete-user",
  "magic-link-sign-in",
  "email-otp-sign-in",
  "email-otp-reset-password",
  "create-api-key",
  "update-api-key",
  "delete-api-key",
  "revoke-api-key",
  // Every way in (core/sign-in-audit.ts): a session issued, or a refusal with its reason.
  "sign-in",
  "sign-in-failed",
  // The OpenID provider (docs/oidc-provider.md "Audit"): a user's grants, and clients made.
  "oauth-consent",
  "oauth-consent-revoked",
  "oauth-client-created",
  "organization-create",
  "organization-update",
  "organization-delete",
  "organization-add-member",
  "organization-remove-member",
  "organization-update-member-role",
  "organization-leave",
  "organization-invite-member",
  "organization-accept-invitation",
  "organization-reject-invitation",
  "organization-cancel-invitation",
  "organization-create-team",
  "organization-update-team",
  "organization-remove-team",
  "organization-add-team-member",
  "organization-remove-team-member",
  "organization-create-role",
  "organization-update-role",
  "organization-delete-role",
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];
