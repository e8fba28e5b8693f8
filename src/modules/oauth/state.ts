import type { EntityManager } from "@mikro-orm/core";
import { z } from "zod";
import type { App } from "../../app.ts";
import { sign, verify } from "../../crypto/signing.ts";
import { constantTimeEqual, sha256 } from "../../crypto/tokens.ts";
import { Verification } from "../../db/entities/index.ts";
import { consumeVerification, storeVerification } from "../../core/index.ts";

/**
 * The OAuth `state` (RFC 6749 §10.12, RFC 9700 §4.7): 256 random bits that go to the provider
 * and come back, and one verification row keyed by their SHA-256 that holds everything the
 * callback needs, the PKCE verifier included. Ten minutes to live, used up on first use.
 */
export const STATE_PURPOSE = "oauth-state";
const PURPOSE = STATE_PURPOSE;
export const STATE_TTL_MS = 10 * 60 * 1000;

const stateValueSchema = z.object({
  provider: z.string(),
  callbackURL: z.string().nullable(),
  errorCallbackURL: z.string().nullable(),
  newUserCallbackURL: z.string().nullable(),
  codeVerifier: z.string(),
  /** Set by /link-social: the callback links to this user instead of signing in. */
  linkUserId: z.string().nullable(),
  scopes: z.array(z.string()),
  nonce: z.string().nullable(),
  /**
   * /sign-in/social's `oauth_query` (core/registry.ts SignInContinuation), verified at the start:
   * the callback's sign-in goes on with that authorize request. The row's value is text (no
   * length limit on either dialect); the body field is at most 16 KiB. Absent in a row saved
   * before this field was: none.
   */
  oauthQuery: z.string().nullable().default(null),
});

export type OAuthState = z.output<typeof stateValueSchema>;

export async function saveState(app: App, em: EntityManager, value: OAuthState): Promise<string> {
  const { token } = await storeVerification(app, em, PURPOSE, JSON.stringify(stateValueSchema.parse(value)), STATE_TTL_MS / 1000);
  return token;
}

/** The state's row while it is live, without using it up (where a refused callback sends the browser). */
export async function findState(app: App, em: EntityManager, state: string): Promise<OAuthState | null> {
  if (state.length < 20 || state.length > 200) return null;
  const row = await em.findOne(Verification, { identifier: sha256(state), purpose: PURPOSE, expiresAt: { $gt: app.clock.now() } }, { disableIdentityMap: true });
  const parsed = row ? stateValueSchema.safeParse(JSON.parse(row.value)) : null;
  return parsed?.success ? parsed.data : null;
}

/**
 * The state bound to the browser that started the flow (RFC 9700 §4.7.1, better-auth's state
 * cookie): the start answer sets `{prefix}.state` holding the state's SHA-256, signed with a key
 * from the service secret, and the callback accepts a state only from a browser whose cookie
 * names it. A callback URL replayed elsewhere (login CSRF, linking CSRF) has no such cookie.
 */
export const STATE_COOKIE = "state";
export const STATE_COOKIE_MAX_AGE_SEC = STATE_TTL_MS / 1000;

/** Secrets that verify a state cookie, newest first (the first one signs). */
const cookieSecrets = (app: App): readonly string[] => app.secrets;

export function stateCookieValue(app: App, state: string): string {
  return sign(sha256(state), cookieSecrets(app)[0]!);
}

export function stateCookieMatches(app: App, state: string, cookie: string | null): boolean {
  if (!cookie) return false;
  const digest = verify(cookie, cookieSecrets(app));
  return digest !== null && constantTimeEqual(digest, sha256(state));
}

/**
 * Uses a state up: of two callbacks racing with one state, only the one whose conditional delete
 * removed the row goes on (core/single-use-tokens.ts consumeVerification, as for mailed tokens).
 */
export async function consumeState(app: App, em: EntityManager, state: string): Promise<OAuthState | null> {
  const value = await consumeVerification(app, em, PURPOSE, state);
  const parsed = value === null ? null : stateValueSchema.safeParse(JSON.parse(value));
  return parsed?.success ? parsed.data : null;
}
