import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { OauthAccessToken, OauthClient, OauthCode, OauthConsent, OauthRefreshToken } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError, OAuthError } from "../../errors.ts";
import { recordAudit, type Actor } from "../../core/index.ts";
import { clientOf, createClient, findClient, type Client } from "./clients.ts";
import { checkMetadata, clientAnswer } from "./registration.ts";

/**
 * The client endpoints of @better-auth/oauth-provider (docs/oidc-provider.md "Clients"): a signed-in
 * user manages the clients they registered; an admin with `oauthClient` creates and updates any
 * client, and only an admin may mark one `skip_consent` (trusted). Someone else's client is not
 * found (404), never "forbidden": no enumeration of client ids.
 */

export interface ClientFields {
  redirect_uris?: string[] | undefined;
  post_logout_redirect_uris?: string[] | undefined;
  token_endpoint_auth_method?: string | undefined;
  jwks?: { keys: Record<string, unknown>[] } | undefined;
  jwks_uri?: string | undefined;
  grant_types?: string[] | undefined;
  response_types?: string[] | undefined;
  client_name?: string | undefined;
  client_uri?: string | undefined;
  logo_uri?: string | undefined;
  tos_uri?: string | undefined;
  policy_uri?: string | undefined;
  scope?: string | undefined;
  contacts?: string[] | undefined;
  software_id?: string | undefined;
  software_version?: string | undefined;
  type?: string | undefined;
  skip_consent?: boolean | undefined;
  disabled?: boolean | undefined;
  metadata?: Record<string, unknown> | undefined;
}

/** RFC 7591 metadata only (the admin-only flags are taken apart). */
function metadataOf({ skip_consent: _s, disabled: _d, metadata: _m, ...rest }: ClientFields) {
  return rest;
}

async function ownClient(em: EntityManager, userId: string, clientId: string): Promise<Client> {
  const client = await findClient(em, clientId);
  if (!client || client.row.user?.id !== userId) throw new AuthError("OAUTH_CLIENT_NOT_FOUND");
  return client;
}

async function anyClient(em: EntityManager, clientId: string): Promise<Client> {
  const client = await findClient(em, clientId);
  if (!client) throw new AuthError("OAUTH_CLIENT_NOT_FOUND");
  return client;
}

/** POST /oauth2/create-client (owned by the caller) and /admin/oauth2/create-client (owned by no one). */
export async function createManagedClient(app: App, em: EntityManager, actor: Actor & { userId: string }, body: ClientFields, owner: { userId: string } | { admin: true }) {
  const m = await checkMetadata(app, metadataOf(body), { trusted: true });
  const scopes = (m.scope ?? "").split(" ").filter(Boolean);
  const admin = "admin" in owner;
  const { client, secret } = await createClient(app, em, {
    name: m.client_name, uri: m.client_uri, logoUri: m.logo_uri, tosUri: m.tos_uri, policyUri: m.policy_uri, contacts: m.contacts,
    redirectUris: m.redirect_uris ?? [], postLogoutRedirectUris: m.post_logout_redirect_uris, grantTypes: m.grant_types,
    authMethod: m.token_endpoint_auth_method, jwks: m.jwks, jwksUri: m.jwks_uri, scopes: scopes.length ? scopes : null, softwareId: m.software_id, softwareVersion: m.software_version,
    type: m.type ?? null, skipConsent: admin ? body.skip_consent : false, userId: admin ? null : owner.userId, metadata: admin ? body.metadata : undefined,
  });
  await recordAudit(em, app.clock, actor, {
    action: "oauth-client-created", targetType: "user", targetId: actor.userId, metadata: { clientId: client.clientId, name: client.row.name ?? null, trusted: client.row.skipConsent },
  });
  return clientAnswer(client, secret);
}

export async function getOwnClient(em: EntityManager, userId: string, clientId: string) {
  return clientAnswer(await ownClient(em, userId, clientId), null);
}

export async function listOwnClients(em: EntityManager, userId: string) {
  const rows = await em.find(OauthClient, { user: userId }, { orderBy: { createdAt: "asc" }, disableIdentityMap: true });
  return rows.map((r) => clientAnswer(clientOf(r), null));
}

/** The merged metadata checked as a whole, then the changed columns written. */
async function applyUpdate(app: App, em: EntityManager, client: Client, update: ClientFields, admin: boolean) {
  const current = clientAnswer(client, null);
  // New keys (inline or by URI) replace the current ones, whichever way those were given.
  if (update.jwks !== undefined || update.jwks_uri !== undefined) {
    delete current.jwks;
    delete current.jwks_uri;
  }
  // Leaving private_key_jwt leaves its key URI behind (only that method uses it).
  if (update.token_endpoint_auth_method !== undefined && update.token_endpoint_auth_method !== "private_key_jwt") delete current.jwks_uri;
  const merged = { ...metadataOf(current as ClientFields), ...metadataOf(update) };
  const { public: _p, client_id: _c, client_id_issued_at: _i, ...checked } = merged as Record<string, unknown>;
  const m = await checkMetadata(app, checked, { trusted: true });
  if (m.token_endpoint_auth_method !== client.row.authMethod && (m.token_endpoint_auth_method === "none" || client.isPublic)) {
    throw new OAuthError("INVALID_CLIENT_METADATA", "a client cannot change between public and confidential", "invalid_client_metadata");
  }
  const scopes = (m.scope ?? "").split(" ").filter(Boolean);
  await em.nativeUpdate(OauthClient, { id: client.row.id }, {
    name: m.client_name ?? null, uri: m.client_uri ?? null, logoUri: m.logo_uri ?? null, tosUri: m.tos_uri ?? null, policyUri: m.policy_uri ?? null,
    contacts: m.contacts?.length ? JSON.stringify(m.contacts) : null, redirectUris: JSON.stringify(m.redirect_uris ?? []),
    postLogoutRedirectUris: m.post_logout_redirect_uris?.length ? JSON.stringify(m.post_logout_redirect_uris) : null,
    grantTypes: JSON.stringify(m.grant_types), scopes: scopes.length ? JSON.stringify(scopes) : null, authMethod: m.token_endpoint_auth_method,
    jwks: m.jwks ? JSON.stringify(m.jwks) : null, jwksUri: m.jwks_uri ?? null, softwareId: m.software_id ?? null, softwareVersion: m.software_version ?? null, type: m.type ?? null,
    ...(admin && update.skip_consent !== undefined ? { skipConsent: update.skip_consent } : {}),
    ...(admin && update.disabled !== undefined ? { disabled: update.disabled } : {}),
    ...(admin && update.metadata !== undefined ? { metadata: JSON.stringify(update.metadata) } : {}),
    updatedAt: app.clock.now(),
  });
  return clientAnswer((await findClient(em, client.clientId))!, null);
}

export async function updateOwnClient(app: App, em: EntityManager, userId: string, input: { client_id: string; update: ClientFields }) {
  return applyUpdate(app, em, await ownClient(em, userId, input.client_id), input.update, false);
}

export async function adminUpdateClient(app: App, em: EntityManager, input: { client_id: string; update: ClientFields }) {
  return applyUpdate(app, em, await anyClient(em, input.client_id), input.update, true);
}

/** The client and everything issued to it go together. */
export async function deleteOwnClient(em: EntityManager, userId: string, clientId: string) {
  return deleteClient(em, await ownClient(em, userId, clientId));
}

async function deleteClient(em: EntityManager, client: Client) {
  const clientId = client.clientId;
  await inTransaction(em, async (tx) => {
    await tx.nativeDelete(OauthCode, { clientId });
    await tx.nativeDelete(OauthAccessToken, { clientId });
    await tx.nativeDelete(OauthRefreshToken, { clientId });
    await tx.nativeDelete(OauthConsent, { clientId });
    await tx.nativeDelete(OauthClient, { id: client.row.id });
  });
  return null; // better-auth answers null
}

/** A new secret, answered once; the old one stops working at once. */
export async function rotateOwnSecret(app: App, em: EntityManager, userId: string, clientId: string) {
  return rotateSecret(app, em, await ownClient(em, userId, clientId));
}

async function rotateSecret(app: App, em: EntityManager, client: Client) {
  const clientId = client.clientId;
  if (client.isPublic) throw new OAuthError("INVALID_CLIENT_METADATA", "a public client has no secret", "invalid_client");
  const secret = randomToken(32);
  await em.nativeUpdate(OauthClient, { id: client.row.id }, { secretHash: sha256(secret), updatedAt: app.clock.now() });
  return clientAnswer((await findClient(em, clientId))!, secret);
}

/** The console's clients page (`oauthClient` permission): every client, newest first, and the admin-only flags. */
export async function adminListClients(em: EntityManager, page: { limit: number; offset: number }) {
  const [rows, total] = await em.findAndCount(OauthClient, {}, { orderBy: { createdAt: "desc", id: "asc" }, limit: page.limit, offset: page.offset, disableIdentityMap: true });
  return { clients: rows.map((r) => clientAnswer(clientOf(r), null)), total };
}

/** One client by id, as the list shows it (the console's client page): 404 OAUTH_CLIENT_NOT_FOUND. */
export const adminGetClient = async (em: EntityManager, clientId: string) => clientAnswer(await anyClient(em, clientId), null);
export const adminDeleteClient = async (em: EntityManager, clientId: string) => deleteClient(em, await anyClient(em, clientId));
export const adminRotateSecret = async (app: App, em: EntityManager, clientId: string) => rotateSecret(app, em, await anyClient(em, clientId));
