import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

/*
 * Portcullis as an OpenID provider (docs/oidc-provider.md). Every credential is stored as its
 * SHA-256 digest only: client secrets, authorization codes, access and refresh tokens. JSON lists
 * (redirect URIs, scopes, grant types) are text columns holding a JSON array.
 */

/** A registered relying party (RFC 7591 client metadata). */
export const OauthClient = defineEntity({
  name: "OauthClient",
  tableName: "oauth_clients",
  properties: (p) => ({
    id: p.uuid().primary(),
    clientId: p.string().length(64).unique("oauth_clients_client_id_unique"),
    // SHA-256 of the secret; null for a public client (token_endpoint_auth_method "none").
    secretHash: p.string().length(64).nullable(),
    secretExpiresAt: p.datetime().nullable(),
    authMethod: p.string().length(32),
    // RFC 7591 `jwks` (JSON): the public keys of a private_key_jwt client (OIDC Core §9).
    jwks: p.text().nullable(),
    // RFC 7591 `jwks_uri`: where such a client publishes them instead (fetched under the SSRF guard).
    jwksUri: p.text().nullable(),
    name: p.string().length(255).nullable(),
    uri: p.text().nullable(),
    logoUri: p.text().nullable(),
    redirectUris: p.text(),
    postLogoutRedirectUris: p.text().nullable(),
    grantTypes: p.text(),
    scopes: p.text().nullable(),
    contacts: p.text().nullable(),
    tosUri: p.text().nullable(),
    policyUri: p.text().nullable(),
    type: p.string().length(32).nullable(),
    softwareId: p.string().length(255).nullable(),
    softwareVersion: p.string().length(255).nullable(),
    metadata: p.text().nullable(),
    skipConsent: p.boolean().default(false),
    disabled: p.boolean().default(false),
    // The user who registered it (get-clients lists theirs); null for dynamic registration and admin clients.
    user: p.manyToOne(User).ref().nullable().deleteRule("cascade").index("oauth_clients_user_id_index"),
    referenceId: p.string().length(255).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type IOauthClient = InferEntity<typeof OauthClient>;

/**
 * An authorization code (RFC 6749 §4.1.2): short-lived, single-use (`usedAt` set by one
 * conditional update), bound to its client, redirect URI, PKCE challenge (RFC 7636), nonce,
 * scopes and the session that approved it. Its id is the grant id of every token issued from it.
 */
export const OauthCode = defineEntity({
  name: "OauthCode",
  tableName: "oauth_codes",
  properties: (p) => ({
    id: p.uuid().primary(),
    codeHash: p.string().length(64).unique("oauth_codes_code_hash_unique"),
    clientId: p.string().length(64),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("oauth_codes_user_id_index"),
    sessionId: p.uuid(),
    redirectUri: p.text(),
    codeChallenge: p.string().length(128),
    scopes: p.text(),
    nonce: p.text().nullable(),
    resource: p.text().nullable(),
    claims: p.text().nullable(),
    // The approving session's RFC 8176 methods and the acr chosen for the request (ID token claims).
    amr: p.text().nullable(),
    acr: p.text().nullable(),
    authTime: p.datetime(),
    expiresAt: p.datetime().index("oauth_codes_expires_at_index"),
    usedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});
export type IOauthCode = InferEntity<typeof OauthCode>;

/**
 * An opaque access token. `grantId` names the code (or refresh family) it came from, so a replay
 * or a reuse revokes everything of that grant; `sessionId`, when set, binds it to the browser
 * session that approved it (gone with it).
 */
export const OauthAccessToken = defineEntity({
  name: "OauthAccessToken",
  tableName: "oauth_access_tokens",
  properties: (p) => ({
    id: p.uuid().primary(),
    tokenHash: p.string().length(64).unique("oauth_access_tokens_token_hash_unique"),
    clientId: p.string().length(64).index("oauth_access_tokens_client_id_index"),
    user: p.manyToOne(User).ref().nullable().deleteRule("cascade").index("oauth_access_tokens_user_id_index"),
    sessionId: p.uuid().nullable(),
    grantId: p.uuid().nullable().index("oauth_access_tokens_grant_id_index"),
    scopes: p.text(),
    resource: p.text().nullable(),
    expiresAt: p.datetime().index("oauth_access_tokens_expires_at_index"),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});
export type IOauthAccessToken = InferEntity<typeof OauthAccessToken>;

/**
 * A refresh token. Rotation (RFC 9700 §4.14.2): each use sets `usedAt` by a conditional update and
 * issues the next of the same `grantId`; a second use of a rotated token revokes the whole grant.
 */
export const OauthRefreshToken = defineEntity({
  name: "OauthRefreshToken",
  tableName: "oauth_refresh_tokens",
  properties: (p) => ({
    id: p.uuid().primary(),
    tokenHash: p.string().length(64).unique("oauth_refresh_tokens_token_hash_unique"),
    clientId: p.string().length(64),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("oauth_refresh_tokens_user_id_index"),
    sessionId: p.uuid().nullable(),
    grantId: p.uuid().index("oauth_refresh_tokens_grant_id_index"),
    scopes: p.text(),
    resource: p.text().nullable(),
    authTime: p.datetime(),
    // Kept from the code: ID tokens of a refresh repeat the original authentication (OIDC Core §12.2).
    amr: p.text().nullable(),
    acr: p.text().nullable(),
    expiresAt: p.datetime().index("oauth_refresh_tokens_expires_at_index"),
    usedAt: p.datetime().nullable(),
    revokedAt: p.datetime().nullable(),
    createdAt: p.datetime(),
  }),
});
export type IOauthRefreshToken = InferEntity<typeof OauthRefreshToken>;

/** What a user allowed a client (one row per user and client). */
export const OauthConsent = defineEntity({
  name: "OauthConsent",
  tableName: "oauth_consents",
  uniques: [{ properties: ["user", "clientId"], name: "oauth_consents_user_client_unique" }],
  properties: (p) => ({
    id: p.uuid().primary(),
    clientId: p.string().length(64).index("oauth_consents_client_id_index"),
    user: p.manyToOne(User).ref().deleteRule("cascade"),
    scopes: p.text(),
    referenceId: p.string().length(255).nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});
export type IOauthConsent = InferEntity<typeof OauthConsent>;
