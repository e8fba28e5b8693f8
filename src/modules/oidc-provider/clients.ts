import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { constantTimeEqual, randomToken, sha256 } from "../../crypto/tokens.ts";
import { OauthClient, type IOauthClient } from "../../db/entities/index.ts";
import { OAuthError } from "../../errors.ts";
import { assertionSubject, ASSERTION_TYPE, verifyAssertion } from "./client-assertion.ts";

/** A stored client, its JSON lists parsed. */
export interface Client {
  row: IOauthClient;
  clientId: string;
  isPublic: boolean;
  redirectUris: string[];
  postLogoutRedirectUris: string[];
  grantTypes: string[];
  /** The scopes it may ask for; null: every scope the service offers. */
  scopes: string[] | null;
}

const list = (text: string | null | undefined): string[] => (text ? (JSON.parse(text) as string[]) : []);

export function clientOf(row: IOauthClient): Client {
  return {
    row,
    clientId: row.clientId,
    isPublic: row.authMethod === "none",
    redirectUris: list(row.redirectUris),
    postLogoutRedirectUris: list(row.postLogoutRedirectUris),
    grantTypes: list(row.grantTypes),
    scopes: row.scopes == null ? null : list(row.scopes),
  };
}

export async function findClient(em: EntityManager, clientId: string): Promise<Client | null> {
  if (!clientId || clientId.length > 64) return null;
  const row = await em.findOne(OauthClient, { clientId }, { disableIdentityMap: true });
  return row ? clientOf(row) : null;
}

/** The scopes a client may ask for (its own list, within what the service offers). */
export function allowedScopes(app: App, client: Client): string[] {
  const offered = app.config.oidcProvider.scopes;
  return client.scopes ? client.scopes.filter((s) => offered.includes(s)) : offered;
}

export interface NewClient {
  name?: string | null | undefined;
  uri?: string | null | undefined;
  logoUri?: string | null | undefined;
  redirectUris: string[];
  postLogoutRedirectUris?: string[] | undefined;
  grantTypes: string[];
  authMethod: "client_secret_basic" | "client_secret_post" | "none" | "private_key_jwt";
  /** RFC 7591 `jwks`: the public keys a `private_key_jwt` client signs its assertions with. */
  jwks?: { keys: unknown[] } | null | undefined;
  /** RFC 7591 `jwks_uri`: where such a client publishes them instead (remote-jwks.ts). */
  jwksUri?: string | null | undefined;
  scopes?: string[] | null | undefined;
  contacts?: string[] | undefined;
  tosUri?: string | null | undefined;
  policyUri?: string | null | undefined;
  type?: string | null | undefined;
  softwareId?: string | null | undefined;
  softwareVersion?: string | null | undefined;
  metadata?: Record<string, unknown> | null | undefined;
  skipConsent?: boolean | undefined;
  userId?: string | null | undefined;
  referenceId?: string | null | undefined;
  secretExpiresInSec?: number | undefined;
}

/** Registers a client; the secret is answered once and stored as its SHA-256 digest only. */
export async function createClient(app: App, em: EntityManager, input: NewClient): Promise<{ client: Client; secret: string | null }> {
  const now = app.clock.now();
  const secret = input.authMethod === "none" || input.authMethod === "private_key_jwt" ? null : randomToken(32);
  const row: IOauthClient = {
    id: randomUUID(),
    clientId: randomToken(24),
    secretHash: secret ? sha256(secret) : null,
    secretExpiresAt: secret && input.secretExpiresInSec ? new Date(now.getTime() + input.secretExpiresInSec * 1000) : null,
    authMethod: input.authMethod,
    jwks: input.jwks ? JSON.stringify(input.jwks) : null,
    jwksUri: input.jwksUri ?? null,
    name: input.name ?? null,
    uri: input.uri ?? null,
    logoUri: input.logoUri ?? null,
    redirectUris: JSON.stringify(input.redirectUris),
    postLogoutRedirectUris: input.postLogoutRedirectUris?.length ? JSON.stringify(input.postLogoutRedirectUris) : null,
    grantTypes: JSON.stringify(input.grantTypes),
    scopes: input.scopes ? JSON.stringify(input.scopes) : null,
    contacts: input.contacts?.length ? JSON.stringify(input.contacts) : null,
    tosUri: input.tosUri ?? null,
    policyUri: input.policyUri ?? null,
    type: input.type ?? null,
    softwareId: input.softwareId ?? null,
    softwareVersion: input.softwareVersion ?? null,
    metadata: input.metadata ? JSON.stringify(input.metadata) : null,
    skipConsent: input.skipConsent ?? false,
    disabled: false,
    user: (input.userId ?? null) as never,
    referenceId: input.referenceId ?? null,
    createdAt: now,
    updatedAt: now,
  };
  await em.insert(OauthClient, row);
  return { client: clientOf(row), secret };
}

/** Parses `Authorization: Basic` (RFC 6749 §2.3.1: both parts form-urlencoded). */
function basicCredentials(header: string | null): { id: string; secret: string } | null {
  if (!header || !/^basic\s+/i.test(header)) return null;
  const decoded = Buffer.from(header.replace(/^basic\s+/i, "").trim(), "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) return null;
  try {
    const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, " "));
    return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
  } catch {
    return null;
  }
}

const DUMMY_HASH = sha256("portcullis: no such client");
/** The methods a secret authenticates (a private_key_jwt client's old secret, if it had one, no longer does). */
const SECRET_METHODS = new Set(["client_secret_basic", "client_secret_post"]);

function refused(basic: boolean): OAuthError {
  // RFC 6749 §5.2: 401 with the scheme the client tried.
  return new OAuthError("CLIENT_AUTHENTICATION_FAILED", "Client authentication failed", "invalid_client", basic ? { "www-authenticate": 'Basic realm="oauth2"' } : undefined);
}

/**
 * Client authentication at the token, introspection and revocation endpoints (RFC 6749 §2.3):
 * `client_secret_basic`, `client_secret_post`, `private_key_jwt` (client-assertion.ts), or `none` for a public client (its client_id
 * only). The secret's digest is compared in constant time, and an unknown client costs the same.
 */
export async function authenticateClient(
  app: App,
  em: EntityManager,
  authorization: string | null,
  body: { client_id?: string | undefined; client_secret?: string | undefined; client_assertion?: string | undefined; client_assertion_type?: string | undefined },
  opts: { allowPublic: boolean },
): Promise<Client> {
  const basic = basicCredentials(authorization);
  if (body.client_assertion !== undefined || body.client_assertion_type !== undefined) {
    if (basic || body.client_secret !== undefined) throw new OAuthError("INVALID_REQUEST", "Use one client authentication method");
    if (body.client_assertion_type !== ASSERTION_TYPE || !body.client_assertion) throw refused(false);
    const subject = await assertionSubject(body.client_assertion);
    if (subject === null || (body.client_id !== undefined && body.client_id !== subject)) throw refused(false);
    const client = await findClient(em, subject);
    if (!client || client.row.disabled || client.row.authMethod !== "private_key_jwt") throw refused(false);
    const keys = { jwks: client.row.jwks ?? null, jwksUri: client.row.jwksUri ?? null };
    if (!(await verifyAssertion(app, em, client.clientId, keys, body.client_assertion))) throw refused(false);
    return client;
  }
  if (basic && body.client_secret !== undefined) throw new OAuthError("INVALID_REQUEST", "Use one client authentication method");
  if (basic && body.client_id !== undefined && body.client_id !== basic.id) throw new OAuthError("INVALID_REQUEST", "client_id does not match the credentials");
  const id = basic?.id ?? body.client_id;
  const secret = basic?.secret ?? body.client_secret;
  if (!id) throw refused(false);
  const client = await findClient(em, id);
  if (secret === undefined) {
    if (!client || !client.isPublic || !opts.allowPublic || client.row.disabled) throw refused(false);
    return client;
  }
  const matches = constantTimeEqual(sha256(secret), client?.row.secretHash ?? DUMMY_HASH);
  if (!client || !matches || !SECRET_METHODS.has(client.row.authMethod) || client.row.disabled) throw refused(basic !== null);
  const expires = client.row.secretExpiresAt;
  if (expires && expires.getTime() <= app.clock.now().getTime()) throw refused(basic !== null);
  return client;
}
