import { z } from "zod";

/**
 * The OAuth endpoints' parameters. A missing or non-string parameter becomes undefined, so the
 * procedure answers the RFC's own error (RFC 6749 §5.2 invalid_request) rather than a
 * VALIDATION_ERROR.
 */
const oauthParam = z.string().max(8192).optional().catch(undefined);

/** The authorization request's parameters, as the query carries them (at most 40, each short). */
export const authorizeInput = z
  .record(z.string().max(64), z.string().max(8192))
  .refine((r) => Object.keys(r).length <= 40, "too many parameters");

export const tokenInput = z.object({
  grant_type: oauthParam,
  code: oauthParam,
  redirect_uri: oauthParam,
  code_verifier: oauthParam,
  refresh_token: oauthParam,
  scope: oauthParam,
  client_id: oauthParam,
  client_secret: oauthParam,
  client_assertion: oauthParam,
  client_assertion_type: oauthParam,
  resource: oauthParam,
  device_code: oauthParam,
});

export const tokenOfClientInput = z.object({
  token: oauthParam,
  token_type_hint: oauthParam,
  client_id: oauthParam,
  client_secret: oauthParam,
  client_assertion: oauthParam,
  client_assertion_type: oauthParam,
});

export const userInfoInput = z.object({ access_token: oauthParam }).optional();

export const endSessionInput = z.object({
  id_token_hint: oauthParam,
  client_id: oauthParam,
  post_logout_redirect_uri: oauthParam,
  state: oauthParam,
});

const oauthQuery = z.string().min(1, "is required").max(16384);

export const consentInput = z.object({
  accept: z.boolean(),
  scope: z.string().max(2048).optional(),
  oauth_query: oauthQuery,
});

export const continueInput = z.object({
  selected: z.boolean().optional(),
  created: z.boolean().optional(),
  postLogin: z.boolean().optional(),
  oauth_query: oauthQuery,
});

export const publicClientInput = z.object({ client_id: z.string().min(1, "is required").max(64) });

/** RFC 7591 metadata, checked by the service (registration.ts) so that a bad field answers invalid_client_metadata. */
export const registerInput = z.record(z.string().max(64), z.unknown()).refine((r) => Object.keys(r).length <= 40, "too many fields");

/** Client metadata of the management endpoints (RFC 7591 names; checked again by the service). */
export const clientFields = z.object({
  redirect_uris: z.array(z.string().max(2048)).max(20).optional(),
  post_logout_redirect_uris: z.array(z.string().max(2048)).max(20).optional(),
  token_endpoint_auth_method: z.enum(["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]).optional(),
  jwks: z.object({ keys: z.array(z.record(z.string().max(64), z.unknown())).max(10) }).optional(),
  jwks_uri: z.string().max(2048).optional(),
  grant_types: z.array(z.string().max(128)).max(8).optional(),
  response_types: z.array(z.string().max(32)).max(4).optional(),
  client_name: z.string().max(255).optional(),
  client_uri: z.string().max(2048).optional(),
  logo_uri: z.string().max(2048).optional(),
  tos_uri: z.string().max(2048).optional(),
  policy_uri: z.string().max(2048).optional(),
  scope: z.string().max(2048).optional(),
  contacts: z.array(z.string().max(320)).max(10).optional(),
  software_id: z.string().max(255).optional(),
  software_version: z.string().max(255).optional(),
  type: z.enum(["web", "native", "user-agent-based"]).optional(),
});

export const adminClientFields = clientFields.extend({
  skip_consent: z.boolean().optional(),
  disabled: z.boolean().optional(),
  metadata: z.record(z.string().max(64), z.unknown()).optional(),
});

export const clientIdInput = z.object({ client_id: z.string().min(1, "is required").max(64) });
export const updateClientInput = clientIdInput.extend({ update: clientFields });
export const adminUpdateClientInput = clientIdInput.extend({ update: adminClientFields });
export const adminListClientsInput = z.object({ limit: z.coerce.number().int().min(1).max(200).default(50), offset: z.coerce.number().int().min(0).default(0) }).default({ limit: 50, offset: 0 });

export const consentIdInput = z.object({ id: z.string().min(1, "is required").max(64) });
export const updateConsentInput = consentIdInput.extend({ update: z.object({ scopes: z.array(z.string().max(128)).max(64) }) });
