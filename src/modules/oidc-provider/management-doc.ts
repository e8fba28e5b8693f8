import { z } from "zod";
import type { OperationDoc } from "../../openapi/doc.ts";

const switchable = true;
export const clientRecord = z.looseObject({
  client_id: z.string(),
  client_secret: z.string().optional(),
  client_secret_expires_at: z.number().optional(),
  client_id_issued_at: z.number(),
  redirect_uris: z.array(z.string()),
  grant_types: z.array(z.string()),
  token_endpoint_auth_method: z.string(),
  public: z.boolean(),
  disabled: z.boolean(),
  skip_consent: z.literal(true).optional(),
  user_id: z.string().optional(),
});
const consentRecord = z.object({ id: z.string(), clientId: z.string(), userId: z.string(), scopes: z.array(z.string()), createdAt: z.string(), updatedAt: z.string() });
const nothing = z.null();
const metadataErrors = {
  INVALID_CLIENT_METADATA: "invalid_client_metadata",
  INVALID_REDIRECT_URI: "invalid_redirect_uri",
  INVALID_SCOPE: "invalid_scope",
} as const;

/** OpenAPI docs of management.router.ts (composed into oidc-provider.openapi.ts). */
export const managementOperations = {
  "oauth2.createClient": {
    summary: "Register a client owned by the caller",
    description: "The client with its secret (shown once). `skip_consent` is an admin's to set.",
    access: "own-session",
    switchable,
    output: clientRecord,
    oauthErrors: metadataErrors,
  },
  "oauth2.getClient": { summary: "One of the caller's clients (no secret)", access: "session", switchable, output: clientRecord, errors: ["OAUTH_CLIENT_NOT_FOUND"] },
  "oauth2.getClients": { summary: "The caller's clients", access: "session", switchable, output: z.array(clientRecord) },
  "oauth2.updateClient": {
    summary: "Update one of the caller's clients",
    access: "own-session",
    switchable,
    output: clientRecord,
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
    oauthErrors: metadataErrors,
  },
  "oauth2.deleteClient": {
    summary: "Delete one of the caller's clients, with every token and consent it holds",
    access: "session",
    switchable,
    output: nothing,
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
  },
  "oauth2.client.rotateSecret": {
    summary: "A new secret for one of the caller's confidential clients (the old one stops working)",
    access: "own-session",
    switchable,
    output: clientRecord,
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
    oauthErrors: { INVALID_CLIENT_METADATA: "invalid_client" },
  },
  "oauth2.getConsent": { summary: "One of the caller's consents", access: "session", switchable, output: consentRecord, errors: ["OAUTH_CONSENT_NOT_FOUND"] },
  "oauth2.getConsents": { summary: "The caller's consents", access: "session", switchable, output: z.array(consentRecord) },
  "oauth2.updateConsent": {
    summary: "Change the scopes of one of the caller's consents",
    access: "own-session",
    switchable,
    output: consentRecord,
    errors: ["OAUTH_CONSENT_NOT_FOUND"],
    oauthErrors: { INVALID_SCOPE: "invalid_scope" },
  },
  "oauth2.deleteConsent": {
    summary: "Revoke one of the caller's consents, and the client's tokens for the caller",
    access: "session",
    switchable,
    output: nothing,
    errors: ["OAUTH_CONSENT_NOT_FOUND"],
  },
  "admin.oauth2.createClient": {
    summary: "Create a client (admin: may mark it trusted with `skip_consent`)",
    access: "own-session",
    switchable,
    output: clientRecord,
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_CREATE_OAUTH_CLIENTS"],
    oauthErrors: metadataErrors,
  },
  "admin.oauth2.updateClient": {
    summary: "Update any client (admin: `skip_consent`, `disabled`, `metadata` too)",
    access: "own-session",
    switchable,
    output: clientRecord,
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_UPDATE_OAUTH_CLIENTS"],
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
    oauthErrors: metadataErrors,
  },
  "admin.oauth2.listClients": {
    summary: "Every client, newest first (the console's clients page)",
    access: "session",
    switchable,
    output: z.object({ clients: z.array(clientRecord), total: z.number() }),
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_OAUTH_CLIENTS"],
  },
  "admin.oauth2.getClient": {
    summary: "One client by `client_id`, as the list shows it (the console's client page)",
    access: "session",
    switchable,
    output: clientRecord,
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_OAUTH_CLIENTS"],
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
  },
  "admin.oauth2.rotateSecret": {
    summary: "A new secret for any confidential client (shown once; the old one stops working)",
    access: "own-session",
    switchable,
    output: clientRecord,
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_UPDATE_OAUTH_CLIENTS"],
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
    oauthErrors: { INVALID_CLIENT_METADATA: "invalid_client" },
  },
  "admin.oauth2.deleteClient": {
    summary: "Delete any client, with its codes, tokens and consents",
    access: "session",
    switchable,
    output: nothing,
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_DELETE_OAUTH_CLIENTS"],
    errors: ["OAUTH_CLIENT_NOT_FOUND"],
  },
  "admin.oauth2.getClientConsents": {
    summary: "The consents given to one client (the newest 200), with each user's email",
    access: "session",
    switchable,
    output: z.array(consentRecord.extend({ userEmail: z.string() })),
    permissions: ["YOU_ARE_NOT_ALLOWED_TO_LIST_OAUTH_CLIENTS"],
  },
} as const satisfies Record<string, OperationDoc>;
