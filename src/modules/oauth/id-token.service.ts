import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { User, type IUser } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";
import { isTokenRejection, type OAuthProvider, type ProviderProfile } from "../../oauth/providers/index.ts";
import type { RequestInfo } from "../session/session.service.ts";
import { signInWithProvider, type SocialSignIn } from "./linking.service.ts";
import { profileEmail, providerFailure } from "./oauth.service.ts";
import { getProvider } from "./runtime.ts";
import type { GrantedTokens } from "./tokens.ts";

type RequestMeta = RequestInfo & { requestId: string };

export interface IdTokenSignInInput {
  provider: string;
  idToken: {
    token: string;
    nonce?: string | undefined;
    accessToken?: string | undefined;
    refreshToken?: string | undefined;
    /** The access token's expiry, epoch milliseconds. */
    expiresAt?: number | undefined;
  };
}

/** A token that fails verification: 401 INVALID_TOKEN; why goes to the log (never the token). */
function rejected(app: App, req: RequestMeta, provider: OAuthProvider, err: unknown): AuthError {
  const reason = (err as { code?: unknown }).code ?? (err as Error).name;
  app.logger.info({ requestId: req.requestId, provider: provider.name, reason, detail: (err as Error).message?.slice(0, 200) }, "id token refused");
  return new AuthError("INVALID_ID_TOKEN", { cause: err });
}

/** The verified profile: a bad token is the caller's fault (401), unreachable keys the provider's (500). */
async function verifiedProfile(app: App, req: RequestMeta, provider: OAuthProvider, input: IdTokenSignInInput["idToken"]): Promise<ProviderProfile> {
  // better-auth answers the same for a provider that cannot check ID tokens.
  if (!provider.verifyIdToken) throw new AuthError("ID_TOKEN_NOT_SUPPORTED");
  let profile: ProviderProfile;
  try {
    profile = await provider.verifyIdToken(input.token, input.nonce ?? null);
  } catch (err) {
    if (isTokenRejection(err)) throw rejected(app, req, provider, err);
    throw providerFailure(app, req.requestId, provider.name, "id token keys", err);
  }
  const email = profileEmail(profile.user.email);
  if (!email) throw rejected(app, req, provider, new Error("the email claim is not an address"));
  return { ...profile, user: { ...profile.user, email } };
}

function grantedTokens(app: App, input: IdTokenSignInInput["idToken"]): GrantedTokens {
  const nowMs = app.clock.now().getTime();
  const expiresInSec = input.accessToken && input.expiresAt !== undefined ? Math.max(0, Math.floor((input.expiresAt - nowMs) / 1000)) : null;
  return {
    accessToken: input.accessToken ?? null,
    refreshToken: input.refreshToken ?? null,
    idToken: input.token,
    expiresInSec,
    refreshTokenExpiresInSec: null,
    scope: null,
  };
}

/**
 * POST /sign-in/social with `idToken` (better-auth's native and One Tap sign-in): the token is
 * verified against the provider's keys, then the code flow's rules apply unchanged (linking.service:
 * linked → session; email match → link only when verified or trusted, with the takeover cleanup;
 * else a new user). Never a silent fallback to the redirect flow.
 */
export async function signInWithIdToken(app: App, em: EntityManager, req: RequestMeta, input: IdTokenSignInInput): Promise<{ session: SocialSignIn; user: IUser }> {
  const provider = getProvider(app, input.provider);
  const { user: profile } = await verifiedProfile(app, req, provider, input.idToken);
  const login = { provider, profile, tokens: grantedTokens(app, input.idToken), requestedScopes: null };
  const session = await signInWithProvider(app, em, req, login);
  const user = await em.fork().findOneOrFail(User, { id: session.userId });
  return { session, user };
}
