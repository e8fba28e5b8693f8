import type { App } from "../../app.ts";
import type { ResolvedConfig } from "../../config/index.ts";
import { endpointOf, issuerOf } from "./oidc-provider.rules.ts";
import { supportedGrants } from "./grants.ts";
import { ACR_VALUES_SUPPORTED } from "./acr.ts";
import { ASSERTION_ALGS } from "./client-assertion.ts";

/**
 * RFC 8414 authorization server metadata and OpenID Connect Discovery 1.0 §3: exactly what is
 * implemented. Both documents are the same object (OIDC Discovery is a superset).
 */
export function providerMetadata(app: App) {
  const config = app.config;
  const cfg = config.oidcProvider;
  const registration = cfg.registration.open || cfg.registration.initialAccessToken !== undefined;
  const clientAuth = ["client_secret_basic", "client_secret_post", "private_key_jwt"];
  return {
    issuer: issuerOf(config),
    authorization_endpoint: endpointOf(config, "/oauth2/authorize"),
    token_endpoint: endpointOf(config, "/oauth2/token"),
    userinfo_endpoint: endpointOf(config, "/oauth2/userinfo"),
    jwks_uri: endpointOf(config, "/jwks"),
    ...(registration ? { registration_endpoint: endpointOf(config, "/oauth2/register") } : {}),
    introspection_endpoint: endpointOf(config, "/oauth2/introspect"),
    revocation_endpoint: endpointOf(config, "/oauth2/revoke"),
    end_session_endpoint: endpointOf(config, "/oauth2/end-session"),
    scopes_supported: cfg.scopes,
    response_types_supported: ["code"],
    response_modes_supported: ["query"],
    grant_types_supported: supportedGrants(app),
    subject_types_supported: ["public"],
    id_token_signing_alg_values_supported: [config.oidcProvider.idTokenSigningAlg],
    token_endpoint_auth_methods_supported: [...clientAuth, "none"],
    introspection_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint_auth_methods_supported: [...clientAuth, "none"],
    token_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    introspection_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    revocation_endpoint_auth_signing_alg_values_supported: ASSERTION_ALGS,
    code_challenge_methods_supported: ["S256"],
    prompt_values_supported: ["none", "login", "consent"],
    claims_supported: ["sub", "iss", "aud", "exp", "iat", "auth_time", "nonce", "at_hash", "sid", "acr", "amr", "name", "preferred_username", "picture", "updated_at", "email", "email_verified"],
    acr_values_supported: ACR_VALUES_SUPPORTED,
    claims_parameter_supported: true,
    request_parameter_supported: false,
    request_uri_parameter_supported: false,
    authorization_response_iss_parameter_supported: true,
    ...Object.assign({}, ...app.registry.tokenGrants.map((g) => g.metadata?.(app) ?? {})),
  };
}

/**
 * The metadata's locations at the origin root, outside the base path, with the issuer's path
 * inserted after the well-known segment (RFC 8414 §3.1), plus the OIDC form: clients build the
 * URL from the issuer either way. Null when `path` is none of them.
 */
export function rootMetadataPath(config: ResolvedConfig, path: string): boolean {
  if (!config.oidcProvider.enabled) return false;
  const issuerPath = new URL(issuerOf(config)).pathname.replace(/\/+$/, "");
  return path === `/.well-known/oauth-authorization-server${issuerPath}` || path === `/.well-known/openid-configuration${issuerPath}`;
}
