import { z } from "zod";

const urlString = z.string().max(2048).refine((v) => URL.canParse(v), "must be an absolute URL");

/** The `oidcProvider` section of the config (src/config/schema.ts; docs/oidc-provider.md). */
export const oidcProviderConfig = z
  .object({
    /** The OpenID provider's routes (/oauth2/*, discovery, the sign-in and consent pages). Off: they answer 404. */
    enabled: z.boolean().default(true),
    /** Lifetime of an authorization code (single-use). */
    codeExpiresInSec: z.number().int().min(10).max(600).default(60),
    /** Lifetime of an access token. */
    accessTokenExpiresInSec: z.number().int().min(60).max(24 * 3600).default(3600),
    /** Lifetime of an ID token. */
    idTokenExpiresInSec: z.number().int().min(60).max(24 * 3600).default(3600),
    /**
     * What ID tokens are signed with. RS256 by default: OpenID Connect Discovery requires every
     * provider to offer it (relying parties may support nothing else), whatever `jwt.alg` the
     * service's own JWTs use; JWT access tokens keep `jwt.alg`. The JWKS publishes both keys.
     */
    idTokenSigningAlg: z.enum(["EdDSA", "ES256", "RS256"]).default("RS256"),
    /** Lifetime of a refresh token (each rotation issues a new one with a fresh lifetime). */
    refreshTokenExpiresInSec: z.number().int().min(300).max(365 * 24 * 3600).default(30 * 24 * 3600),
    /**
     * PKCE (S256) on every authorization request. Public clients always need it; false lets a
     * confidential client that cannot do PKCE (an older library) omit it. `plain` is never accepted.
     */
    requirePkce: z.boolean().default(true),
    /** The scopes clients may ask for. */
    scopes: z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/)).min(1).max(64).default(["openid", "profile", "email", "offline_access"]),
    /** An app's own sign-in page instead of the built-in `{publicUrl}/sign-in` (gets the signed `oauth_query`). */
    loginPage: urlString.optional(),
    /** An app's own consent page instead of the built-in `{publicUrl}/consent`. */
    consentPage: urlString.optional(),
    /**
     * RFC 8707 resources a client may ask a JWT access token for (its `aud`). Unset: any absolute
     * http(s) URI without a fragment (an MCP client names its server's URL).
     */
    resources: z.array(urlString).max(64).optional(),
    /** RFC 7591 dynamic registration (POST /oauth2/register). */
    registration: z
      .object({
        /** Open registration without credentials (MCP clients need it). */
        open: z.boolean().default(true),
        /** When set, registration needs `Authorization: Bearer <this>` instead. */
        initialAccessToken: z.string().min(16).max(512).optional(),
        /** Registered clients' secrets expire after this many seconds (0: never). */
        secretExpiresInSec: z.number().int().min(0).default(0),
        /**
         * Let a client's `jwks_uri` be plain http and point at loopback, private (RFC 1918),
         * link-local, CGNAT or unique-local addresses. Off: registration refuses such a URI and the
         * key fetch never connects to one (SSRF guard, src/http/guarded-fetch.ts). For tests and
         * closed networks only.
         */
        allowPrivateUris: z.boolean().default(false),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .prefault({});
