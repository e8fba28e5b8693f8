import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261122000000_initial as SqliteInitial } from "./sqlite/Migration20261122000000_initial.ts";
import { Migration20261122000000_initial as PostgresInitial } from "./postgresql/Migration20261122000000_initial.ts";
import { Migration20261122010600_device as SqliteDevice } from "./sqlite/Migration20261122010600_device.ts";
import { Migration20261122010600_device as PostgresDevice } from "./postgresql/Migration20261122010600_device.ts";
import { Migration20261122011500_audit as SqliteAudit } from "./sqlite/Migration20261122011500_audit.ts";
import { Migration20261122011500_audit as PostgresAudit } from "./postgresql/Migration20261122011500_audit.ts";
import { Migration20261122017000_rate_limits as SqliteRateLimits } from "./sqlite/Migration20261122017000_rate_limits.ts";
import { Migration20261122017000_rate_limits as PostgresRateLimits } from "./postgresql/Migration20261122017000_rate_limits.ts";
import { Migration20261124100000_second_factors as SqliteSecondFactors } from "./sqlite/Migration20261124100000_second_factors.ts";
import { Migration20261124100000_second_factors as PostgresSecondFactors } from "./postgresql/Migration20261124100000_second_factors.ts";
import { Migration20261126000000_list_users as SqliteListUsers } from "./sqlite/Migration20261126000000_list_users.ts";
import { Migration20261126000000_list_users as PostgresListUsers } from "./postgresql/Migration20261126000000_list_users.ts";
import { Migration20261128000000_audit_filters as SqliteAuditFilters } from "./sqlite/Migration20261128000000_audit_filters.ts";
import { Migration20261128000000_audit_filters as PostgresAuditFilters } from "./postgresql/Migration20261128000000_audit_filters.ts";
import { Migration20261129000000_better_auth_imports as SqliteBetterAuthImports } from "./sqlite/Migration20261129000000_better_auth_imports.ts";
import { Migration20261129000000_better_auth_imports as PostgresBetterAuthImports } from "./postgresql/Migration20261129000000_better_auth_imports.ts";
import { Migration20261201100000_jwks as SqliteJwks } from "./sqlite/Migration20261201100000_jwks.ts";
import { Migration20261201100000_jwks as PostgresJwks } from "./postgresql/Migration20261201100000_jwks.ts";
import { Migration20261203000000_email_otps as SqliteEmailOtps } from "./sqlite/Migration20261203000000_email_otps.ts";
import { Migration20261203000000_email_otps as PostgresEmailOtps } from "./postgresql/Migration20261203000000_email_otps.ts";
import { Migration20261204000000_api_keys as SqliteApiKeys } from "./sqlite/Migration20261204000000_api_keys.ts";
import { Migration20261204000000_api_keys as PostgresApiKeys } from "./postgresql/Migration20261204000000_api_keys.ts";
import { Migration20261207000000_audit_action_created_at as SqliteAuditActionCreatedAt } from "./sqlite/Migration20261207000000_audit_action_created_at.ts";
import { Migration20261207000000_audit_action_created_at as PostgresAuditActionCreatedAt } from "./postgresql/Migration20261207000000_audit_action_created_at.ts";
import { Migration20261206000000_oidc_provider as SqliteOidcProvider } from "./sqlite/Migration20261206000000_oidc_provider.ts";
import { Migration20261206000000_oidc_provider as PostgresOidcProvider } from "./postgresql/Migration20261206000000_oidc_provider.ts";
import { Migration20261205000000_organizations as SqliteOrganizations } from "./sqlite/Migration20261205000000_organizations.ts";
import { Migration20261205000000_organizations as PostgresOrganizations } from "./postgresql/Migration20261205000000_organizations.ts";
import { Migration20261209100000_auth_methods as SqliteAuthMethods } from "./sqlite/Migration20261209100000_auth_methods.ts";
import { Migration20261209100000_auth_methods as PostgresAuthMethods } from "./postgresql/Migration20261209100000_auth_methods.ts";
import { Migration20261209110000_client_jwks as SqliteClientJwks } from "./sqlite/Migration20261209110000_client_jwks.ts";
import { Migration20261209110000_client_jwks as PostgresClientJwks } from "./postgresql/Migration20261209110000_client_jwks.ts";
import { Migration20261209120000_client_jwks_uri as SqliteClientJwksUri } from "./sqlite/Migration20261209120000_client_jwks_uri.ts";
import { Migration20261209120000_client_jwks_uri as PostgresClientJwksUri } from "./postgresql/Migration20261209120000_client_jwks_uri.ts";
import { Migration20261210000000_api_key_expiry as SqliteApiKeyExpiry } from "./sqlite/Migration20261210000000_api_key_expiry.ts";
import { Migration20261210000000_api_key_expiry as PostgresApiKeyExpiry } from "./postgresql/Migration20261210000000_api_key_expiry.ts";

// Listed explicitly (no file globbing): works the same under tsx, vitest and a bundle.
// SQLite and PostgreSQL keep separate folders because their SQL differs.
export const sqliteMigrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: SqliteInitial },
  { name: "Migration20261122010600_device", class: SqliteDevice },
  { name: "Migration20261122011500_audit", class: SqliteAudit },
  { name: "Migration20261122017000_rate_limits", class: SqliteRateLimits },
  { name: "Migration20261124100000_second_factors", class: SqliteSecondFactors },
  { name: "Migration20261126000000_list_users", class: SqliteListUsers },
  { name: "Migration20261128000000_audit_filters", class: SqliteAuditFilters },
  { name: "Migration20261129000000_better_auth_imports", class: SqliteBetterAuthImports },
  { name: "Migration20261201100000_jwks", class: SqliteJwks },
  { name: "Migration20261203000000_email_otps", class: SqliteEmailOtps },
  { name: "Migration20261204000000_api_keys", class: SqliteApiKeys },
  { name: "Migration20261207000000_audit_action_created_at", class: SqliteAuditActionCreatedAt },
  { name: "Migration20261206000000_oidc_provider", class: SqliteOidcProvider },
  { name: "Migration20261205000000_organizations", class: SqliteOrganizations },
  { name: "Migration20261209100000_auth_methods", class: SqliteAuthMethods },
  { name: "Migration20261209110000_client_jwks", class: SqliteClientJwks },
  { name: "Migration20261209120000_client_jwks_uri", class: SqliteClientJwksUri },
  { name: "Migration20261210000000_api_key_expiry", class: SqliteApiKeyExpiry },
];
export const postgresMigrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: PostgresInitial },
  { name: "Migration20261122010600_device", class: PostgresDevice },
  { name: "Migration20261122011500_audit", class: PostgresAudit },
  { name: "Migration20261122017000_rate_limits", class: PostgresRateLimits },
  { name: "Migration20261124100000_second_factors", class: PostgresSecondFactors },
  { name: "Migration20261126000000_list_users", class: PostgresListUsers },
  { name: "Migration20261128000000_audit_filters", class: PostgresAuditFilters },
  { name: "Migration20261129000000_better_auth_imports", class: PostgresBetterAuthImports },
  { name: "Migration20261201100000_jwks", class: PostgresJwks },
  { name: "Migration20261203000000_email_otps", class: PostgresEmailOtps },
  { name: "Migration20261204000000_api_keys", class: PostgresApiKeys },
  { name: "Migration20261207000000_audit_action_created_at", class: PostgresAuditActionCreatedAt },
  { name: "Migration20261206000000_oidc_provider", class: PostgresOidcProvider },
  { name: "Migration20261205000000_organizations", class: PostgresOrganizations },
  { name: "Migration20261209100000_auth_methods", class: PostgresAuthMethods },
  { name: "Migration20261209110000_client_jwks", class: PostgresClientJwks },
  { name: "Migration20261209120000_client_jwks_uri", class: PostgresClientJwksUri },
  { name: "Migration20261210000000_api_key_expiry", class: PostgresApiKeyExpiry },
];
