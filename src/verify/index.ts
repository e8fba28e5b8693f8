/**
 * `portcullis/verify`: what another service needs to trust Portcullis's JWTs, offline
 * (docs/machine-access.md). jose only: no server code, no database driver. The JWK Set is fetched
 * once and cached (and fetched again when a token names a key it does not hold: a rotation);
 * every verify after that is local.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";

export { errors };

export interface VerifierOptions {
  /** The service's issuer: `jwt.issuer`, by default its public URL. */
  issuer: string;
  /** The audience this service accepts; default the issuer (Portcullis's default `aud`). */
  audience?: string | string[];
  /** `{publicUrl}{basePath}/jwks`. */
  jwksUrl: string | URL;
  /** Seconds of clock skew allowed on `exp` and `nbf` (default 60). */
  clockToleranceSec?: number;
}

/** The claims a Portcullis token carries (src/modules/jwt/tokens.ts). */
export interface PortcullisClaims extends JWTPayload {
  /** The user. */
  sub: string;
  /** The session the token was issued for. */
  sid: string;
  email: string;
  role: string;
  /** RFC 8693 actor: the admin, when the session is an impersonation. */
  act?: { sub: string };
}

export interface Verifier {
  /** The token's claims, or a rejection (jose's `errors`: expired, bad signature, wrong issuer or audience, unknown key...). */
  verify(token: string): Promise<PortcullisClaims>;
}

/** Public-key algorithms only (RFC 8725 §3.1): never `none`, never an HMAC that a published key could forge. */
const ALGORITHMS = ["EdDSA", "ES256", "RS256"];

export function createVerifier(options: VerifierOptions): Verifier {
  const keys = createRemoteJWKSet(new URL(options.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
  const verifyOptions = {
    issuer: options.issuer,
    audience: options.audience ?? options.issuer,
    algorithms: ALGORITHMS,
    typ: "JWT",
    clockTolerance: options.clockToleranceSec ?? 60,
    requiredClaims: ["sub", "exp", "iat"],
  };
  return {
    async verify(token) {
      const { payload } = await jwtVerify(token, keys, verifyOptions);
      return payload as PortcullisClaims;
    },
  };
}

/*
 * What an OAuth-protected resource (an MCP server, an API) needs to accept Portcullis's access
 * tokens (docs/oidc-provider.md "Protecting a resource"): RFC 9728 protected resource metadata,
 * the RFC 6750 §3 challenge that points at it, and a verifier of RFC 9068 `at+jwt` access tokens
 * whose `aud` must be this very resource (RFC 8707: a token for another resource is refused, so
 * tokens are never passed through). jose only.
 */

export interface ResourceOptions {
  /** This resource's identifier, the URL clients call (`https://mcp.example.com/mcp`). */
  resource: string;
  /** Portcullis's issuer: `{publicUrl}{basePath}`. */
  issuer: string;
  /** Default `{issuer}/jwks`. */
  jwksUrl?: string | URL;
  /** Advertised in the metadata (RFC 9728 §2 `scopes_supported`). */
  scopesSupported?: string[];
  /** Seconds of clock skew allowed on `exp` (default 60). */
  clockToleranceSec?: number;
}

/** RFC 9068 §2.2 claims. */
export interface AccessTokenClaims extends JWTPayload {
  sub: string;
  client_id: string;
  scope?: string;
  sid?: string;
}

/** Where the metadata lives: the well-known segment, then the resource's path (RFC 9728 §3.1). */
export function protectedResourceMetadataPath(resource: string): string {
  const path = new URL(resource).pathname.replace(/\/+$/, "");
  return `/.well-known/oauth-protected-resource${path}`;
}

/** The RFC 9728 §2 document to serve at protectedResourceMetadataPath (and, for a root resource, there). */
export function protectedResourceMetadata(options: ResourceOptions) {
  return {
    resource: options.resource,
    authorization_servers: [options.issuer],
    bearer_methods_supported: ["header"],
    ...(options.scopesSupported ? { scopes_supported: options.scopesSupported } : {}),
  };
}

/** `WWW-Authenticate` of a 401 (RFC 9728 §5.1): where a client finds how to get a token. */
export function bearerChallenge(options: Pick<ResourceOptions, "resource">, error?: "invalid_token" | "insufficient_scope"): string {
  const url = new URL(protectedResourceMetadataPath(options.resource), options.resource).toString();
  return `Bearer resource_metadata="${url}"${error ? `, error="${error}"` : ""}`;
}

export interface AccessTokenVerifier {
  /** The claims of a valid token for this resource; a rejection otherwise (jose's errors). */
  verify(token: string): Promise<AccessTokenClaims>;
}

export function createAccessTokenVerifier(options: ResourceOptions): AccessTokenVerifier {
  const keys = createRemoteJWKSet(new URL(options.jwksUrl ?? `${options.issuer}/jwks`), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
  const verifyOptions = {
    issuer: options.issuer,
    audience: options.resource,
    algorithms: ["EdDSA", "ES256", "RS256"],
    typ: "at+jwt",
    clockTolerance: options.clockToleranceSec ?? 60,
    requiredClaims: ["sub", "exp", "iat", "client_id"],
  };
  return {
    async verify(token) {
      const { payload } = await jwtVerify(token, keys, verifyOptions);
      return payload as AccessTokenClaims;
    },
  };
}
