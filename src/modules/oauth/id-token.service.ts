import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User, type IUser } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { IdTokenRefusal, isTokenRejection, type OAuthProvider, type ProviderProfile, type VerifiedIdToken } from "../../social-providers/index.ts";
import type { RequestInfo } from "../../core/index.ts";
import { spendIdToken } from "./id-token-ledger.ts";
import { linkToUser, signInWithProvider, type ProviderLogin, type SocialSignIn } from "./linking.service.ts";
import { profileEmail, providerFailure } from "./oauth.service.ts";
import { getProvider } from "./runtime.ts";
import type { GrantedTokens } from "./tokens.ts";

type RequestMeta = RequestInfo & { requestId: string };

export interface IdTokenInput {
  token: string;
  nonce?: string | undefined;
  accessToken?: string | undefined;
  refreshToken?: string | undefined;
  /** The access token's expiry, epoch milliseconds. */
  expiresAt?: number | undefined;
  /** link-social: the scopes the access token was granted (better-auth stores them with the account). */
  scopes?: string[] | undefined;
}

export interface IdTokenSignInInput {
  provider: string;
  idToken: IdTokenInput;
}

/** A token that fails verification: 401 INVALID_TOKEN; why goes to the log (never the token). */
function rejected(app: App, req: RequestMeta, provider: OAuthProvider, err: unknown): AuthError {
  const reason = (err as { code?: unknown }).code ?? (err as Error).name;
  app.logger.info({ requestId: req.requestId, provider: provider.name, reason, detail: (err as Error).message?.slice(0, 200) }, "id token refused");
  return new AuthError("INVALID_ID_TOKEN", { cause: err });
}

/**
 * The verified profile: a bad token is the caller's fault (401), unreachable keys the provider's
 * (500). A token that passes every check is then used up (docs/security.md): a second
 * presentation, or one of a token a provider issued to us, is a replay (401).
 */
async function acceptIdToken(app: App, em: EntityManager, req: RequestMeta, provider: OAuthProvider, input: IdTokenInput): Promise<ProviderProfile> {
  // better-auth answers the same for a provider that cannot check ID tokens.
  if (!provider.verifyIdToken) throw new AuthError("ID_TOKEN_NOT_SUPPORTED");
  let verified: VerifiedIdToken;
  try {
    verified = await provider.verifyIdToken(input.token, input.nonce ?? null);
  } catch (err) {
    if (isTokenRejection(err)) throw rejected(app, req, provider, err);
    throw providerFailure(app, req.requestId, provider.name, "id token keys", err);
  }
  const email = profileEmail(verified.user.email);
  if (!email) throw rejected(app, req, provider, new Error("the email claim is not an address"));
  if (!(await spendIdToken(app, em, input.token, verified.expiresAt))) {
    throw rejected(app, req, provider, new IdTokenRefusal("ID_TOKEN_REPLAYED", "id_token already used, or issued to this service"));
  }
  return { user: { ...verified.user, email }, raw: verified.raw };
}

function grantedTokens(app: App, input: IdTokenInput): GrantedTokens {
  const nowMs = app.clock.now().getTime();
  const expiresInSec = input.accessToken && input.expiresAt !== undefined ? Math.max(0, Math.floor((input.expiresAt - nowMs) / 1000)) : null;
  return {
    accessToken: input.accessToken ?? null,
    refreshToken: input.refreshToken ?? null,
    idToken: input.token,
    expiresInSec,
    refreshTokenExpiresInSec: null,
    scope: input.scopes?.length ? input.scopes.join(" ") : null,
  };
}

/** The verified token as the linking rules take it (linking.service ProviderLogin). */
async function loginWith(app: App, em: EntityManager, req: RequestMeta, input: IdTokenSignInInput): Promise<ProviderLogin> {
  const provider = getProvider(app, input.provider);
  const { user: profile } = await acceptIdToken(app, em, req, provider, input.idToken);
  return { provider, profile, tokens: grantedTokens(app, input.idToken), requestedScopes: null };
}

/**
 * POST /sign-in/social with `idToken` (better-auth's native and One Tap sign-in): the token is
 * verified against the provider's keys, then the code flow's rules apply unchanged (linking.service:
 * linked → session; email match → link only when verified or trusted, with the takeover cleanup;
 * else a new user). Never a silent fallback to the redirect flow.
 */
export async function signInWithIdToken(app: App, em: EntityManager, req: RequestMeta, input: IdTokenSignInInput): Promise<{ session: SocialSignIn; user: IUser }> {
  const session = await signInWithProvider(app, em, req, await loginWith(app, em, req, input));
  const user = await em.fork().findOneOrFail(User, { id: session.userId });
  return { session, user };
}

/**
 * POST /link-social with `idToken` (better-auth's direct link): the same checks as a sign-in
 * token, then docs/wire-contract.md §5's explicit linking (linking.service linkToUser: whatever the email,
 * 409 when the account belongs to another user). The router lets only a lasting-access session here.
 */
export async function linkWithIdToken(app: App, em: EntityManager, req: RequestMeta, userId: string, input: IdTokenSignInInput): Promise<void> {
  await linkToUser(app, em, userId, await loginWith(app, em, req, input));
}
