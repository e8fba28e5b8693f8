import { z } from "zod";
import { callbackURL, formBoolean } from "../../trpc/schema.ts";

/** A configured name or not: unknown names answer 400 PROVIDER_NOT_FOUND, not a validation error. */
const providerName = z.string().min(1, "is required").max(64);
/** RFC 6749 §3.3 scope-token. */
const scopes = z.array(z.string().min(1).max(256).regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "is not a scope token")).max(32).optional();

/**
 * better-auth's `idToken` (native apps, Google One Tap): the token is verified, the others are
 * stored with the account as given. `expiresAt` is the access token's expiry in epoch milliseconds.
 */
export const idTokenInput = z.object({
  token: z.string().min(1, "is required").max(16384),
  nonce: z.string().min(1).max(512).optional(),
  accessToken: z.string().min(1).max(8192).optional(),
  refreshToken: z.string().min(1).max(8192).optional(),
  expiresAt: z.number().nonnegative().optional(),
});

export const signInSocialInput = z.object({
  provider: providerName,
  callbackURL,
  errorCallbackURL: callbackURL,
  newUserCallbackURL: callbackURL,
  disableRedirect: formBoolean.optional(),
  scopes,
  idToken: idTokenInput.optional(),
  /**
   * The signed authorize request an app's sign-in page received (better-auth's oauth-provider
   * wire): after the provider's round trip, the callback continues it instead of going to
   * callbackURL. A forged or expired one: 400 INVALID_OAUTH_QUERY (trpc/init.ts continuation).
   */
  oauth_query: z.string().min(1, "is required").max(16384).optional(),
});

export const linkSocialInput = z.object({
  provider: providerName,
  callbackURL,
  errorCallbackURL: callbackURL,
  disableRedirect: formBoolean.optional(),
  scopes,
  /** better-auth's direct link: a verified ID token links at once, no redirect. `scopes`: what its access token was granted. */
  idToken: idTokenInput.extend({ scopes }).optional(),
});

/**
 * RFC 6749 §4.1.2 / §4.1.2.1 authorization response (plus RFC 9207 `iss`). Missing code or
 * state is the contract's INVALID_CALLBACK_REQUEST, so both are optional here.
 */
export const callbackInput = z.object({
  provider: providerName,
  code: z.string().max(4096).optional(),
  state: z.string().max(512).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(1024).optional(),
  iss: z.string().max(2048).optional(),
});

export const accountRefInput = z.object({
  providerId: z.string().min(1, "is required").max(255),
  accountId: z.string().min(1).max(255).optional(),
});

/**
 * better-auth 1.6's query: `accountId` is the provider's account id, `providerId` tells apart
 * accounts of two providers that share one. A call without accountId names no account (400
 * ACCOUNT_NOT_FOUND, as better-auth answers), so neither is required, nor is a query at all (tRPC).
 */
export const accountInfoInput = z
  .object({
    accountId: z.string().max(255).optional(),
    providerId: z.string().min(1).max(255).optional(),
  })
  .optional();

/** GET /error: any text (it is escaped and cut short when shown), so the page itself never fails. */
export const errorPageInput = z.object({ error: z.string().optional() });
