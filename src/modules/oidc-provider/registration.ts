import type { EntityManager } from "@mikro-orm/core";
import { z } from "zod";
import type { App } from "../../app.ts";
import { constantTimeEqual, sha256 } from "../../crypto/tokens.ts";
import { OAuthError } from "../../errors.ts";
import { registrableUriProblem } from "../../http/guarded-fetch.ts";
import { createClient, type Client } from "./clients.ts";
import { supportedGrants } from "./grants.ts";
import { isAcceptableRedirectUri } from "./oidc-provider.rules.ts";

/**
 * RFC 7591 dynamic client registration (docs/oidc-provider.md "Registration"): open by default
 * (MCP clients register themselves), closed or gated by an initial access token by config,
 * rate-limited per IP. What a registration cannot choose: `skip_consent` (only an admin trusts a
 * client) and, without the initial access token, `client_credentials` (tokens for nobody's consent).
 */

const httpsUrl = z.string().max(2048).refine((v) => URL.canParse(v) && new URL(v).protocol === "https:", "must be an https URL");

export const clientMetadata = z.object({
  redirect_uris: z.array(z.string().max(2048)).max(20).optional(),
  post_logout_redirect_uris: z.array(z.string().max(2048)).max(20).optional(),
  token_endpoint_auth_method: z.enum(["client_secret_basic", "client_secret_post", "none", "private_key_jwt"]).optional(),
  jwks: z.object({ keys: z.array(z.looseObject({ kty: z.string().max(16) })).min(1).max(10) }).optional(),
  jwks_uri: z.string().max(2048).optional(),
  id_token_signed_response_alg: z.string().max(16).optional(),
  grant_types: z.array(z.string().max(128)).max(8).optional(),
  response_types: z.array(z.string().max(32)).max(4).optional(),
  client_name: z.string().max(255).optional(),
  client_uri: httpsUrl.optional(),
  logo_uri: httpsUrl.optional(),
  tos_uri: httpsUrl.optional(),
  policy_uri: httpsUrl.optional(),
  scope: z.string().max(2048).optional(),
  contacts: z.array(z.string().max(320)).max(10).optional(),
  software_id: z.string().max(255).optional(),
  software_version: z.string().max(255).optional(),
  type: z.enum(["web", "native", "user-agent-based"]).optional(),
});
export type ClientMetadata = z.infer<typeof clientMetadata>;

const invalidMetadata = (description: string) => new OAuthError("INVALID_CLIENT_METADATA", description, "invalid_client_metadata");

/** The metadata a client may register with, checked (RFC 7591 §2, §3.2.2). */
export async function checkMetadata(
  app: App,
  raw: unknown,
  opts: { trusted: boolean },
): Promise<ClientMetadata & { grant_types: string[]; token_endpoint_auth_method: NonNullable<ClientMetadata["token_endpoint_auth_method"]> }> {
  const parsed = clientMetadata.safeParse(raw);
  if (!parsed.success) throw invalidMetadata(parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  const m = parsed.data;
  const grantTypes = m.grant_types ?? ["authorization_code"];
  const supported = supportedGrants(app);
  const unknown = grantTypes.filter((g) => !supported.includes(g));
  if (unknown.length) throw invalidMetadata(`unsupported grant_types: ${unknown.join(" ")}`);
  if (grantTypes.includes("client_credentials") && !opts.trusted) throw invalidMetadata("client_credentials needs an authenticated registration");
  const method = m.token_endpoint_auth_method ?? "client_secret_basic";
  if (method === "none" && grantTypes.includes("client_credentials")) throw invalidMetadata("a public client cannot use client_credentials");
  // OIDC Core §9 private_key_jwt: the public keys inline (`jwks`) or where the client publishes
  // them (`jwks_uri`), never both (RFC 7591 §2). The URI is fetched from an address the registrant
  // chooses: checked here and again at every fetch (src/http/guarded-fetch.ts).
  if (m.jwks && m.jwks_uri !== undefined) throw invalidMetadata("jwks and jwks_uri cannot both be present");
  if (method === "private_key_jwt" && !m.jwks && m.jwks_uri === undefined) throw invalidMetadata("private_key_jwt needs jwks or jwks_uri");
  if (m.jwks_uri !== undefined) {
    if (method !== "private_key_jwt") throw invalidMetadata("jwks_uri is only used by private_key_jwt");
    const problem = await registrableUriProblem(m.jwks_uri, { allowPrivate: app.config.oidcProvider.registration.allowPrivateUris });
    if (problem) throw invalidMetadata(`jwks_uri ${problem}`);
  }
  if (m.jwks && m.jwks.keys.some((k) => "d" in k || "k" in k)) throw invalidMetadata("jwks must hold public keys only");
  // OIDC Registration §2: ID tokens come signed with the one algorithm the provider is set to.
  const idAlg = app.config.oidcProvider.idTokenSigningAlg;
  if (m.id_token_signed_response_alg !== undefined && m.id_token_signed_response_alg !== idAlg) throw invalidMetadata(`id_token_signed_response_alg must be ${idAlg}`);
  if ((m.response_types ?? ["code"]).some((t) => t !== "code")) throw invalidMetadata("response_types must be [\"code\"]");
  const redirects = m.redirect_uris ?? [];
  if (grantTypes.includes("authorization_code") && redirects.length === 0) throw new OAuthError("INVALID_REDIRECT_URI", "redirect_uris are required", "invalid_redirect_uri");
  for (const uri of [...redirects, ...(m.post_logout_redirect_uris ?? [])]) {
    if (!isAcceptableRedirectUri(uri)) throw new OAuthError("INVALID_REDIRECT_URI", `not an acceptable redirect URI: ${uri}`, "invalid_redirect_uri");
  }
  const offered = app.config.oidcProvider.scopes;
  const scopes = (m.scope ?? "").split(" ").filter(Boolean);
  const bad = scopes.filter((s) => !offered.includes(s));
  if (bad.length) throw new OAuthError("INVALID_SCOPE", `cannot request scope ${bad.join(" ")}`, "invalid_scope");
  return { ...m, grant_types: grantTypes, token_endpoint_auth_method: method };
}

/** The client as RFC 7591 §3.2.1 answers it (the secret only at creation and rotation). */
export function clientAnswer(client: Client, secret: string | null) {
  const r = client.row;
  return {
    client_id: r.clientId,
    ...(secret ? { client_secret: secret } : {}),
    ...(client.isPublic ? {} : { client_secret_expires_at: r.secretExpiresAt ? Math.floor(r.secretExpiresAt.getTime() / 1000) : 0 }),
    // A row just inserted holds the owner's id itself; a loaded one a reference.
    user_id: (typeof r.user === "string" ? (r.user as string) : r.user?.id) ?? undefined,
    client_id_issued_at: Math.floor(r.createdAt.getTime() / 1000),
    client_name: r.name ?? undefined,
    client_uri: r.uri ?? undefined,
    logo_uri: r.logoUri ?? undefined,
    tos_uri: r.tosUri ?? undefined,
    policy_uri: r.policyUri ?? undefined,
    contacts: r.contacts ? (JSON.parse(r.contacts) as string[]) : undefined,
    redirect_uris: client.redirectUris,
    post_logout_redirect_uris: client.postLogoutRedirectUris.length ? client.postLogoutRedirectUris : undefined,
    grant_types: client.grantTypes,
    response_types: ["code"],
    token_endpoint_auth_method: r.authMethod,
    jwks: r.jwks ? (JSON.parse(r.jwks) as { keys: Record<string, unknown>[] }) : undefined,
    jwks_uri: r.jwksUri ?? undefined,
    scope: client.scopes?.join(" "),
    software_id: r.softwareId ?? undefined,
    software_version: r.softwareVersion ?? undefined,
    type: r.type ?? undefined,
    public: client.isPublic,
    disabled: r.disabled,
    // Present only when set, as better-auth answers it.
    skip_consent: r.skipConsent || undefined,
  };
}

/** Whether the caller may register, and whether it presented the initial access token (RFC 7591 §3). */
function admission(app: App, authorization: string | null): { trusted: boolean } {
  const { open, initialAccessToken } = app.config.oidcProvider.registration;
  const bearer = authorization && /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, "").trim() : null;
  if (initialAccessToken !== undefined) {
    if (!bearer || !constantTimeEqual(sha256(bearer), sha256(initialAccessToken))) {
      throw new OAuthError("INVALID_INITIAL_ACCESS_TOKEN", "Registration needs a valid initial access token", "invalid_token", { "www-authenticate": 'Bearer error="invalid_token"' });
    }
    return { trusted: true };
  }
  if (!open) throw new OAuthError("REGISTRATION_CLOSED", "Client registration is closed", "access_denied");
  return { trusted: false };
}

/** POST /oauth2/register. */
export async function register(app: App, em: EntityManager, authorization: string | null, raw: unknown) {
  const { trusted } = admission(app, authorization);
  const m = await checkMetadata(app, raw, { trusted });
  const scopes = (m.scope ?? "").split(" ").filter(Boolean);
  const { client, secret } = await createClient(app, em, {
    name: m.client_name, uri: m.client_uri, logoUri: m.logo_uri, tosUri: m.tos_uri, policyUri: m.policy_uri, contacts: m.contacts,
    redirectUris: m.redirect_uris ?? [], postLogoutRedirectUris: m.post_logout_redirect_uris, grantTypes: m.grant_types,
    authMethod: m.token_endpoint_auth_method, jwks: m.jwks, jwksUri: m.jwks_uri, scopes: scopes.length ? scopes : null, softwareId: m.software_id, softwareVersion: m.software_version,
    type: m.type ?? null, secretExpiresInSec: app.config.oidcProvider.registration.secretExpiresInSec,
  });
  return clientAnswer(client, secret);
}
