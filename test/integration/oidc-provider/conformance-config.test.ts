/**
 * The OpenID Foundation's Config OP certification plan (oidcc-config-certification-test-plan,
 * OIDCCConfigTestPlan in github.com/openid-certification/conformance-suite): its one module,
 * oidcc-discovery-endpoint-verification, with the conditions it runs, over HTTP. The issuer is an
 * https URL, as in production (CheckDiscEndpointAllEndpointsAreHttps); the documents are fetched
 * over loopback at the same paths.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { CERTIFICATION_CONFIG } from "./conformance.ts";

/** The members json-schemas/rfc8414/oauth_authorization_server_metadata.json knows (CheckForUnexpectedParametersInServerMetadata). */
const KNOWN_METADATA = new Set([
  "acr_values_supported", "attachments_supported", "authorization_challenge_endpoint", "authorization_details_types_supported",
  "authorization_encryption_alg_values_supported", "authorization_encryption_enc_values_supported", "authorization_endpoint",
  "authorization_response_iss_parameter_supported", "authorization_signing_alg_values_supported", "backchannel_authentication_endpoint",
  "backchannel_authentication_request_signing_alg_values_supported", "backchannel_logout_session_supported", "backchannel_logout_supported",
  "backchannel_token_delivery_modes_supported", "backchannel_user_code_parameter_supported", "challenge_endpoint", "check_session_iframe",
  "claim_types_supported", "claims_in_verified_claims_supported", "claims_locales_supported", "claims_parameter_supported", "claims_supported",
  "client_attestation_pop_signing_alg_values_supported", "client_attestation_signing_alg_values_supported", "client_id_metadata_document_supported",
  "client_registration_types_supported", "code_challenge_methods_supported", "contacts", "description", "device_authorization_endpoint",
  "display_name", "display_values_supported", "documents_check_methods_supported", "documents_methods_supported", "documents_supported",
  "dpop_signing_alg_values_supported", "electronic_records_supported", "end_session_endpoint", "evidence_supported",
  "federation_registration_endpoint", "frontchannel_logout_session_supported", "frontchannel_logout_supported",
  "global_token_revocation_endpoint", "global_token_revocation_endpoint_auth_methods_supported", "grant_management_action_required",
  "grant_management_actions_supported", "grant_management_endpoint", "grant_types_supported", "id_token_encryption_alg_values_supported",
  "id_token_encryption_enc_values_supported", "id_token_signing_alg_values_supported", "information_uri",
  "introspection_encryption_alg_values_supported", "introspection_encryption_enc_values_supported", "introspection_endpoint",
  "introspection_endpoint_auth_methods_supported", "introspection_endpoint_auth_signing_alg_values_supported",
  "introspection_signing_alg_values_supported", "issuer", "jwks", "jwks_uri", "keywords", "logo_uri", "mtls_endpoint_aliases",
  "op_policy_uri", "op_tos_uri", "organization_name", "organization_uri", "pre-authorized_grant_anonymous_access_supported",
  "prompt_values_supported", "protected_resources", "pushed_authorization_request_endpoint", "registration_endpoint",
  "request_authentication_methods_supported", "request_authentication_signing_alg_values_supported",
  "request_object_encryption_alg_values_supported", "request_object_encryption_enc_values_supported",
  "request_object_signing_alg_values_supported", "request_parameter_supported", "request_uri_parameter_supported",
  "require_pushed_authorization_requests", "require_request_uri_registration", "require_signed_request_object",
  "response_modes_supported", "response_types_supported", "revocation_endpoint", "revocation_endpoint_auth_methods_supported",
  "revocation_endpoint_auth_signing_alg_values_supported", "scopes_supported", "service_documentation", "signed_jwks_uri",
  "signed_metadata", "status_list_aggregation_endpoint", "subject_types_supported", "tls_client_certificate_bound_access_tokens",
  "token_endpoint", "token_endpoint_auth_methods_supported", "token_endpoint_auth_signing_alg_values_supported",
  "transformed_claims_functions_supported", "transformed_claims_predefined", "trust_frameworks_supported", "ui_locales_supported",
  "userinfo_encryption_alg_values_supported", "userinfo_encryption_enc_values_supported", "userinfo_endpoint",
  "userinfo_signing_alg_values_supported",
]);

/** RFC 6749 Appendix A.4 scope-token (CheckDiscEndpointScopesSupportedSyntax). */
const SCOPE_TOKEN = /^[\x21\x23-\x5b\x5d-\x7e]+$/;
const PUBLIC_URL = "https://id.example.test";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ ...CERTIFICATION_CONFIG, publicUrl: PUBLIC_URL });
});
afterAll(async () => {
  await server.close();
});

/** An https URL of the issuer, fetched over loopback at the same path. */
const loopback = (url: string) => `${server.url}${new URL(url).pathname}`;

function expectHttpsUrl(value: unknown) {
  expect(typeof value).toBe("string");
  const url = new URL(value as string);
  expect(url.protocol).toBe("https:");
  expect(url.hash).toBe("");
}

describe("oidcc-config-certification-test-plan", () => {
  it("oidcc-discovery-endpoint-verification", async () => {
    const issuerPath = new URL(server.auth).pathname;
    const discoveryUrl = `${PUBLIC_URL}${issuerPath}/.well-known/openid-configuration`;
    // GetDynamicServerConfiguration, EnsureDiscoveryEndpointResponseStatusCodeIs200, CheckDiscoveryEndpointReturnedJsonContentType
    const res = await get(loopback(discoveryUrl));
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const meta = res.body as Record<string, unknown>;
    // The same document where clients that insert the issuer's path after the well-known segment look (RFC 8414 §3.1).
    expect((await get(`${server.url}/.well-known/openid-configuration${issuerPath}`)).body).toEqual(meta);

    // OIDCCCheckDiscEndpointResponseTypesSupported: at least one OpenID Connect response type.
    expect(meta.response_types_supported).toEqual(expect.arrayContaining(["code"]));
    // CheckDiscEndpointDiscoveryUrl, CheckDiscEndpointIssuer, CheckDiscEndpointIssuerIsValidUrl
    expect(discoveryUrl.startsWith("https://") && discoveryUrl.endsWith("/.well-known/openid-configuration")).toBe(true);
    expect(meta.issuer).toBe(discoveryUrl.slice(0, -"/.well-known/openid-configuration".length));
    expectHttpsUrl(meta.issuer);
    expect(new URL(meta.issuer as string).search).toBe("");

    // ValidateServerMetadataAgainstSchema (the members Portcullis publishes, by type) and CheckForUnexpectedParametersInServerMetadata
    for (const [key, value] of Object.entries(meta)) {
      expect(KNOWN_METADATA, `unexpected metadata ${key}`).toContain(key);
      if (key.endsWith("_supported") && !key.endsWith("parameter_supported") && key !== "authorization_response_iss_parameter_supported") {
        expect(Array.isArray(value) && value.length > 0 && value.every((v) => typeof v === "string"), key).toBe(true);
      }
      if (key.endsWith("parameter_supported")) expect(typeof value, key).toBe("boolean");
      // CheckDiscEndpointAllEndpointsAreHttps
      if (key.endsWith("_endpoint")) expectHttpsUrl(value);
    }

    // CheckDiscEndpointSubjectTypesSupported
    expect((meta.subject_types_supported as string[]).some((t) => t === "public" || t === "pairwise")).toBe(true);
    // OIDCCCheckDiscEndpointIdTokenSigningAlgValuesSupported: RS256 is required (OIDC Discovery §3).
    expect(meta.id_token_signing_alg_values_supported).toContain("RS256");
    // CheckDiscEndpointAuthorizationEndpoint, ...TokenEndpoint, ...UserinfoEndpoint, ...RegistrationEndpoint, CheckJwksUri
    for (const key of ["authorization_endpoint", "token_endpoint", "userinfo_endpoint", "registration_endpoint", "jwks_uri"]) expectHttpsUrl(meta[key]);

    // FetchServerKeys and ValidateJwksSequence: public signing keys, each with a distinct kid, RSA of 2048 bits at least.
    const jwks = await get(loopback(meta.jwks_uri as string));
    expect(jwks.status).toBe(200);
    const keys = jwks.body.keys as Array<Record<string, string>>;
    expect(keys.length).toBeGreaterThan(0);
    expect(new Set(keys.map((k) => k.kid)).size).toBe(keys.length);
    for (const key of keys) {
      expect(key.kid).toEqual(expect.any(String));
      for (const secret of ["d", "p", "q", "dp", "dq", "qi", "k"]) expect(key[secret]).toBeUndefined();
      if (key.use !== undefined) expect(key.use).toBe("sig");
      if (key.kty === "RSA") expect(Buffer.from(key.n!, "base64url").length * 8).toBeGreaterThanOrEqual(2048);
    }
    expect(keys.some((k) => k.kty === "RSA" && k.alg === "RS256")).toBe(true);

    // CheckDiscEndpointRequestParameterSupported / RequestUriParameterSupported (INFO): neither is offered.
    expect(meta.request_parameter_supported).toBe(false);
    expect(meta.request_uri_parameter_supported).toBe(false);
    // CheckDiscEndpointClaimsParameterSupported (INFO), OIDCCCheckDiscEndpointClaimsSupported
    expect(meta.claims_parameter_supported).toBe(true);
    expect(meta.claims_supported).toEqual(expect.arrayContaining(["sub", "iss", "aud", "exp", "iat"]));
    // OIDCCCheckDiscEndpointGrantTypesSupported: a non-empty array.
    expect(meta.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code"]));
    // CheckDiscEndpointScopesSupportedContainsOpenId, CheckDiscEndpointScopesSupportedSyntax
    expect(meta.scopes_supported).toContain("openid");
    for (const scope of meta.scopes_supported as string[]) expect(scope).toMatch(SCOPE_TOKEN);
    // CheckDiscEndpointLocalesSyntax: no locales published.
    expect(meta.ui_locales_supported).toBeUndefined();
    expect(meta.claims_locales_supported).toBeUndefined();
    // EnsureServerConfigurationCodeChallengeMethodsSupportedIsAnArray
    expect(meta.code_challenge_methods_supported).toEqual(["S256"]);
  });
});
