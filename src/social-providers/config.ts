import { z } from "zod";
import type { MapUserInfo } from "./provider.ts";

/**
 * `providers` in the config: operator-chosen names (the `{provider}` path segment) mapped to a
 * built-in (`google`, `github`, `discord`: client id and secret suffice) or any OAuth 2.0
 * provider (`oauth2`: every URL and a mapUserInfo function). A missing URL or secret fails
 * validation at start, with the provider's name in the key path (`providers.acme.tokenUrl`).
 */

const httpUrl = z
  .string()
  .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol), "must be an absolute http(s) URL");
const secret = z.string().min(1, "is required");
const scopes = z.array(z.string().min(1).max(256).regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "must be one RFC 6749 §3.3 scope token")).max(64);
/** Extra authorization request parameters (e.g. `prompt`, `access_type`); the flow's own always win. */
const authorizationParams = z.record(z.string().min(1), z.string()).optional();
/**
 * RFC 9207 (mix-up defence): the provider's issuer identifier, and whether its authorization
 * responses always carry `iss` (its metadata's `authorization_response_iss_parameter_supported`).
 * With an issuer, an `iss` that differs is refused; with `requireIssuerParameter`, a missing one too.
 */
const issuerCheck = {
  /** RFC 9207: the provider's issuer identifier; an authorization response whose `iss` differs is refused. */
  issuer: z.string().min(1).max(2048).optional(),
  /** RFC 9207: refuse authorization responses without `iss` (needs `issuer`). */
  requireIssuerParameter: z.boolean().optional(),
};

/** One Tap and native SDKs present a token within seconds; a longer window only lengthens the life of a leaked one. */
const idTokenMaxAgeSec = z.number().int().min(30).max(86_400).optional();

const builtIn = {
  /** OAuth client id registered with the provider. */
  clientId: secret,
  /** OAuth client secret; better kept in the environment (`GOOGLE_CLIENT_SECRET` and so on). */
  clientSecret: secret,
  /** Replace the default scopes. */
  scopes: scopes.optional(),
  /** Extra authorization request parameters (e.g. `prompt`, `access_type`); the flow's own always win. */
  authorizationParams,
  /** Endpoint overrides, for proxies and tests. */
  authUrl: httpUrl.optional(),
  /** Token endpoint override. */
  tokenUrl: httpUrl.optional(),
  /** User-info endpoint override. */
  userInfoUrl: httpUrl.optional(),
  ...issuerCheck,
};

const providerConfigUnion = z.discriminatedUnion("type", [
  z
    .object({
      type: z.literal("oauth2"),
      /** OAuth client id registered with the provider. */
      clientId: secret,
      /** OAuth client secret. */
      clientSecret: secret,
      /** Authorization endpoint. */
      authUrl: httpUrl,
      /** Token endpoint. */
      tokenUrl: httpUrl,
      /** User-info endpoint (called with the access token). */
      userInfoUrl: httpUrl,
      /** Scopes requested. */
      scopes: scopes.default([]),
      /** (userInfo) => `{ id, email, emailVerified, name, image }`: maps the user-info answer to the standard user. */
      mapUserInfo: z.custom<MapUserInfo>((v) => typeof v === "function", "must be a function"),
      /** RFC 6749 §2.3.1: Basic is the one every server must accept. */
      tokenEndpointAuthMethod: z.enum(["client_secret_basic", "client_secret_post"]).default("client_secret_basic"),
      /** Extra authorization request parameters; the flow's own always win. */
      authorizationParams,
      ...issuerCheck,
      /**
       * Sign-in with an ID token (POST /sign-in/social `idToken`): the provider's OpenID discovery
       * document (better-auth's option), which names its `issuer` and `jwks_uri`; or `issuer`
       * with `jwksUrl`. Explicit values win over discovered ones. Without either, 400 ID_TOKEN_NOT_SUPPORTED.
       */
      discoveryUrl: httpUrl.optional(),
      /** Where the ID tokens' signing keys are published (with `issuer`, instead of `discoveryUrl`). */
      jwksUrl: httpUrl.optional(),
      /** Verified ID-token claims → the standard user info (default: sub, email, email_verified, name, picture). */
      mapIdTokenClaims: z.custom<MapUserInfo>((v) => typeof v === "function", "must be a function").optional(),
      /** Sign-in and link-social with an ID token: the most seconds since its `iat` (default 600; its `exp` at most 24 h ahead). */
      idTokenMaxAgeSec,
    })
    .strict(),
  z
    .object({
      type: z.literal("google"),
      ...builtIn,
      /** Expected `iss` of the id_token and of the authorization response (default: Google's two spellings). */
      issuer: z.string().min(1).optional(),
      /** Where the id_token's signing keys are published. */
      jwksUrl: httpUrl.optional(),
      /** Sign-in and link-social with an ID token: the most seconds since its `iat` (default 600; its `exp` at most 24 h ahead). */
      idTokenMaxAgeSec,
    })
    .strict(),
  z
    .object({
      type: z.literal("github"),
      ...builtIn,
      /** Override of the endpoint listing the user's verified emails (`/user/emails`). */
      emailsUrl: httpUrl.optional(),
    })
    .strict(),
  z.object({ type: z.literal("discord"), ...builtIn }).strict(),
]);

export const providerConfigSchema = providerConfigUnion.superRefine((provider, ctx) => {
  // Google's issuer is known without configuration; the others need theirs to compare `iss` with.
  if (provider.requireIssuerParameter && !provider.issuer && provider.type !== "google") {
    ctx.addIssue({ code: "custom", path: ["issuer"], message: "is required when requireIssuerParameter is true" });
  }
  if (provider.type !== "oauth2" || provider.discoveryUrl) return;
  // ID tokens need an issuer to compare `iss` with, and keys.
  if (provider.jwksUrl && !provider.issuer) ctx.addIssue({ code: "custom", path: ["issuer"], message: "is required with jwksUrl (or set discoveryUrl)" });
  if (provider.mapIdTokenClaims && !provider.jwksUrl) {
    ctx.addIssue({ code: "custom", path: ["mapIdTokenClaims"], message: "needs discoveryUrl, or issuer and jwksUrl" });
  }
});

export type ProviderConfig = z.output<typeof providerConfigSchema>;

/** Names become the `{provider}` path segment and the accounts' providerId. */
const PROVIDER_NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

export const providersSchema = z
  .record(z.string(), providerConfigSchema)
  .superRefine((providers, ctx) => {
    for (const name of Object.keys(providers)) {
      if (!PROVIDER_NAME.test(name)) ctx.addIssue({ code: "custom", path: [name], message: "provider names are lower-case letters, digits, - and _ (64 at most)" });
      else if (name === "credential") ctx.addIssue({ code: "custom", path: [name], message: "is reserved for email and password accounts" });
    }
  })
  .default({});

/** Outgoing HTTP to providers (src/http): timeouts, size cap, and a dispatcher tests may inject. */
export const httpConfigSchema = z
  .object({
    /** TCP/TLS connect timeout of calls to providers. */
    connectTimeoutMs: z.number().int().positive().max(60_000).default(5_000),
    /** Time to the response headers. */
    headersTimeoutMs: z.number().int().positive().max(120_000).default(10_000),
    /** Time between body chunks. */
    bodyTimeoutMs: z.number().int().positive().max(120_000).default(10_000),
    /** Largest provider response read (token, user info, JWKS). */
    maxResponseBytes: z.number().int().positive().max(16 * 1024 * 1024).default(1024 * 1024),
    /** An undici Dispatcher (Agent, MockAgent); default: one Agent per instance with the limits above. */
    dispatcher: z.custom<import("undici").Dispatcher>((v) => typeof (v as { dispatch?: unknown } | null)?.dispatch === "function", "must be an undici Dispatcher").optional(),
  })
  .strict()
  .prefault({});
