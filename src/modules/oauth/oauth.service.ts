import type { EntityManager } from "@mikro-orm/core";
import { z } from "zod";
import type { App } from "../../app.ts";
import { codeChallengeS256, createCodeVerifier } from "../../crypto/pkce.ts";
import { randomToken } from "../../crypto/tokens.ts";
import { AuthError } from "../../errors.ts";
import { HttpError } from "../../http/client.ts";
import { callbackWith } from "../../mail/links.ts";
import { issuerAccepted, ProfileError, type OAuthProvider } from "../../social-providers/index.ts";
import { normalizeEmail, type RequestInfo } from "../../core/index.ts";
import { linkToUser, signInWithProvider, type SocialSignIn } from "./linking.service.ts";
import { rememberIssuedIdToken } from "./id-token-ledger.ts";
import { getProvider, oauthRuntime, redirectUri } from "./runtime.ts";
import { consumeState, findState, saveState, stateCookieMatches, stateCookieValue } from "./state.ts";

type RequestMeta = RequestInfo & { requestId: string };

export interface StartInput {
  provider: string;
  callbackURL?: string | undefined;
  errorCallbackURL?: string | undefined;
  newUserCallbackURL?: string | undefined;
  scopes?: string[] | undefined;
  /** /link-social: the signed-in caller. */
  linkUserId?: string | null;
  /** /sign-in/social: a verified `oauth_query` the callback's sign-in continues (continuationOf). */
  oauthQuery?: string | null;
}

export interface Authorization {
  /** The provider's authorization URL (RFC 6749 §4.1.1). */
  url: string;
  /** The state cookie's value: the start answer sets it, the callback wants it back. */
  stateCookie: string;
}

/** POST /sign-in/social and /link-social. */
export async function startAuthorization(app: App, em: EntityManager, input: StartInput): Promise<Authorization> {
  const provider = getProvider(app, input.provider);
  const codeVerifier = createCodeVerifier();
  const scopes = [...new Set([...provider.defaultScopes, ...(input.scopes ?? [])])];
  const nonce = provider.usesNonce ? randomToken(16) : null;
  const state = await saveState(app, em, {
    provider: provider.name,
    callbackURL: input.callbackURL || null,
    errorCallbackURL: input.errorCallbackURL || null,
    newUserCallbackURL: input.newUserCallbackURL || null,
    codeVerifier,
    linkUserId: input.linkUserId ?? null,
    scopes,
    nonce,
    // A link continues no authorize request.
    oauthQuery: input.linkUserId ? null : (input.oauthQuery ?? null),
  });
  const url = provider.authorizationUrl({ state, codeChallenge: codeChallengeS256(codeVerifier), redirectUri: redirectUri(app, provider.name), scopes, nonce });
  return { url, stateCookie: stateCookieValue(app, state) };
}

/** A failure once the state is known: the router redirects to its errorCallbackURL when there is one. */
export class CallbackFailure extends Error {
  override name = "CallbackFailure";
  constructor(
    readonly error: AuthError,
    readonly errorCallbackURL: string | null,
    /** The provider's own `error` parameter (RFC 6749 §4.1.2.1), when it sent one. */
    readonly providerError: string | null = null,
  ) {
    super(error.message, { cause: error });
  }
}

function describeCause(err: unknown): Record<string, unknown> {
  if (err instanceof HttpError) {
    return { kind: err.kind, target: err.target, status: err.status, oauthError: err.oauthError, detail: (err.cause as Error | undefined)?.message };
  }
  if (err instanceof Error) return { name: err.name, code: (err as { code?: unknown }).code, message: err.message.slice(0, 300) };
  return { message: "a non-Error was thrown" };
}

/**
 * 500 OAUTH_PROVIDER_ERROR: the public message is fixed (src/errors.ts); the cause goes to the
 * log with the request id, and never a token or a code (HttpError carries neither).
 */
export function providerFailure(app: App, requestId: string, provider: string, step: string, err: unknown): AuthError {
  app.logger.error({ requestId, provider, step, cause: describeCause(err) }, "oauth provider failure");
  return new AuthError("OAUTH_PROVIDER_ERROR", { cause: err });
}

async function upstream<T>(app: App, req: RequestMeta, provider: OAuthProvider, step: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw providerFailure(app, req.requestId, provider.name, step, err);
  }
}

export interface CallbackInput {
  provider: string;
  code?: string | undefined;
  state?: string | undefined;
  error?: string | undefined;
  /** RFC 9207 issuer identification. */
  iss?: string | undefined;
  /** The browser's state cookie, if it sent one. */
  stateCookie: string | null;
}

/**
 * `continueWith`: the start's `oauth_query`, for a sign-in that handed over a session; the router
 * then answers where that authorize request goes next instead of `redirectTo`.
 */
export type CallbackOutcome = { kind: "signed-in"; session: SocialSignIn; redirectTo: string; continueWith: string | null } | { kind: "linked"; redirectTo: string };

/**
 * The body's `oauth_query` when it is one to continue: the continuation middleware (trpc/init.ts)
 * has already refused a forged or expired one with 400 INVALID_OAUTH_QUERY; null when the OpenID
 * provider is off (the field is then ignored, as on every sign-in).
 */
export function continuationOf(app: App, query: string | undefined): string | null {
  const hook = app.registry.signInContinuation;
  return query && hook?.check(app, query) ? query : null;
}

const emailFormat = z.email();

/** The provider's address, lower-cased (docs/wire-contract.md §2); null when it is not an address. */
export function profileEmail(email: string): string | null {
  const normalized = normalizeEmail(email);
  return normalized.length <= 320 && emailFormat.safeParse(normalized).success ? normalized : null;
}

/**
 * Login and linking CSRF defence (RFC 9700 §4.7.1): only the browser that started the flow may
 * finish it. A refusal leaves the state alone, as better-auth does: whoever replays a leaked
 * callback URL elsewhere cannot burn the rightful browser's flow, and without that browser's
 * cookie (and the PKCE verifier we hold) the code is worthless; the row still expires in 10 min.
 */
async function assertBoundToBrowser(app: App, em: EntityManager, state: string, cookie: string | null): Promise<void> {
  if (app.config.account.skipStateCookieCheck || stateCookieMatches(app, state, cookie)) return;
  const pending = await findState(app, em, state);
  throw new CallbackFailure(new AuthError("STATE_MISMATCH"), pending?.errorCallbackURL ?? null);
}

/**
 * RFC 6749 §4.1.2 / §4.1.2.1: a response carries a code or the provider's error, and the state.
 * One without either is malformed whatever its state: refused before the state is looked up, so
 * it neither uses up nor reveals a pending flow.
 */
function wellFormed(input: CallbackInput): input is CallbackInput & { state: string } {
  return Boolean(input.state && (input.code || input.error));
}

/**
 * Whether this callback is the end of the flow the browser's state cookie names, so the cookie
 * has served whatever the outcome: a well-formed response of a known provider naming that state
 * uses it up, or finds it dead (expired, used, another provider's). A malformed response leaves
 * the flow alone, and a cookie that names another flow of this browser is left to that flow.
 */
export function settlesStateCookie(app: App, input: CallbackInput): boolean {
  return oauthRuntime(app).providers.has(input.provider) && wellFormed(input) && stateCookieMatches(app, input.state, input.stateCookie);
}

/** GET /callback/{provider}: state, code exchange with the stored verifier, user info, the linking rules. */
export async function handleCallback(app: App, em: EntityManager, req: RequestMeta, input: CallbackInput): Promise<CallbackOutcome> {
  const provider = getProvider(app, input.provider);
  if (!wellFormed(input)) throw new AuthError("INVALID_CALLBACK_REQUEST");
  await assertBoundToBrowser(app, em, input.state, input.stateCookie);
  const state = await consumeState(app, em, input.state);
  if (!state) throw new AuthError("STATE_MISMATCH");
  // RFC 9700 §4.4 mix-up defence: a state answers only at the provider it was issued for...
  if (state.provider !== provider.name) throw new CallbackFailure(new AuthError("STATE_MISMATCH"), state.errorCallbackURL);
  // ...and RFC 9207 §2.4: the response names the issuer that sent it, before anything of it is used.
  if (!issuerAccepted(provider.responseIssuer, input.iss)) throw new CallbackFailure(new AuthError("ISSUER_MISMATCH"), state.errorCallbackURL);
  const providerError = input.error ? input.error.replace(/[^A-Za-z0-9_.-]/g, "").slice(0, 64) : null;
  if (providerError || !input.code) {
    throw new CallbackFailure(new AuthError("INVALID_CALLBACK_REQUEST"), state.errorCallbackURL, providerError);
  }
  const code = input.code;
  try {
    // The authorize request this sign-in is for, checked again before the code is spent: one that
    // expired during the round trip fails the callback (400 INVALID_OAUTH_QUERY, before any sign-in).
    const continueWith = state.linkUserId || !state.oauthQuery ? null : continuationOf(app, state.oauthQuery);
    const redirect = redirectUri(app, provider.name);
    const tokens = await upstream(app, req, provider, "token exchange", () =>
      provider.exchangeCode({ code, codeVerifier: state.codeVerifier, redirectUri: redirect }),
    );
    // Its id_token is stored with the account, and get-access-token hands it out: never a sign-in token.
    await rememberIssuedIdToken(app, em, tokens.idToken);
    const { user } = await upstream(app, req, provider, "user info", () => provider.userInfo(tokens, { nonce: state.nonce }));
    const email = profileEmail(user.email);
    if (!email) throw providerFailure(app, req.requestId, provider.name, "user info", new ProfileError("the email is not an address"));
    const login = { provider, profile: { ...user, email }, tokens, requestedScopes: state.scopes };
    if (state.linkUserId) {
      await linkToUser(app, em, state.linkUserId, login);
      return { kind: "linked", redirectTo: callbackWith(app, state.callbackURL ?? "/", {}) };
    }
    const session = await signInWithProvider(app, em, req, login);
    const target = session.isNewUser && state.newUserCallbackURL ? state.newUserCallbackURL : (state.callbackURL ?? "/");
    // A pending two-factor sign-in (twoFactor.enforceOnSocial): the app's page asks for the second step.
    const pending = session.secondStep?.kind === "pending";
    // Pending, the app's page still holds its oauth_query and sends it with the second step, as after any sign-in.
    const redirectTo = callbackWith(app, target, pending ? { twoFactorRedirect: "true" } : {});
    return { kind: "signed-in", session, redirectTo, continueWith: pending || !session.token ? null : continueWith };
  } catch (err) {
    if (err instanceof AuthError) throw new CallbackFailure(err, state.errorCallbackURL);
    throw err;
  }
}
