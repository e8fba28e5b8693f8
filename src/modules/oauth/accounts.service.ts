import { LockMode } from "../../db/mikro-orm.ts";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { Account, User, type IAccount } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { AuthError } from "../../errors.ts";
import { splitScopes, type OAuthProvider } from "../../social-providers/index.ts";
import { handOutIdToken, rememberIssuedIdToken } from "./id-token-ledger.ts";
import { providerFailure } from "./oauth.service.ts";
import { getProvider, oauthRuntime } from "./runtime.ts";
import { openTokens, resealKept, sealTokens, type OpenedTokens } from "./tokens.ts";
import { CREDENTIAL_PROVIDER } from "../../core/index.ts";

/** get-access-token refreshes first when the token expires within this (docs/wire-contract.md §5). */
export const REFRESH_MARGIN_MS = 5_000;

export interface AccountRef {
  providerId: string;
  accountId?: string | undefined;
}

/** One of the caller's accounts at a configured provider (400 PROVIDER_NOT_FOUND otherwise). */
async function ownProviderAccount(app: App, em: EntityManager, userId: string, ref: AccountRef) {
  const provider = getProvider(app, ref.providerId);
  const account = await em.findOne(
    Account,
    { user: userId, providerId: provider.name, ...(ref.accountId ? { accountId: ref.accountId } : {}) },
    { orderBy: { createdAt: "asc" } },
  );
  if (!account) throw new AuthError("ACCOUNT_NOT_FOUND");
  return { provider, account };
}

function open(app: App, requestId: string, account: IAccount): OpenedTokens {
  try {
    return openTokens(oauthRuntime(app).aead, account);
  } catch (err) {
    // Sealed under a key this instance no longer has, or altered in the database.
    app.logger.error({ requestId, accountId: account.id, err: (err as Error).message }, "stored provider token does not open");
    throw new AuthError("FAILED_TO_GET_ACCESS_TOKEN");
  }
}

/** RFC 6749 §6 with the stored refresh token; the new tokens (and the kept ones) are sealed and stored. */
async function refreshStored(app: App, em: EntityManager, requestId: string, provider: OAuthProvider, account: IAccount, kept: OpenedTokens & { refreshToken: string }) {
  let tokens;
  try {
    tokens = await provider.refresh(kept.refreshToken);
  } catch (err) {
    throw providerFailure(app, requestId, provider.name, "token refresh", err);
  }
  // A refreshed id_token goes to the caller (refresh-token, get-access-token): never a sign-in token.
  await rememberIssuedIdToken(app, em, tokens.idToken);
  const now = app.clock.now();
  const { aead } = oauthRuntime(app);
  // No `scope` in the answer: the stored string stays, in the provider's own format.
  const sealed = { ...sealTokens(aead, account.id, tokens, account.scope ?? null, now), ...resealKept(aead, account.id, tokens, kept) };
  await em.nativeUpdate(Account, { id: account.id }, { ...sealed, updatedAt: now });
  const stored = { ...account, ...sealed } as IAccount;
  return { account: stored, tokens: open(app, requestId, stored) };
}

/** POST /refresh-token */
export async function refreshAccountTokens(app: App, em: EntityManager, requestId: string, userId: string, ref: AccountRef) {
  const { provider, account } = await ownProviderAccount(app, em, userId, ref);
  const opened = open(app, requestId, account);
  const { refreshToken } = opened;
  if (!refreshToken) throw new AuthError("REFRESH_TOKEN_NOT_FOUND");
  const fresh = await refreshStored(app, em, requestId, provider, account, { ...opened, refreshToken });
  // Without a new id_token in the refresh, the stored one goes out.
  await handOutIdToken(app, em, fresh.tokens.idToken);
  return {
    accessToken: fresh.tokens.accessToken,
    refreshToken: fresh.tokens.refreshToken,
    accessTokenExpiresAt: fresh.account.accessTokenExpiresAt?.toISOString() ?? null,
    refreshTokenExpiresAt: fresh.account.refreshTokenExpiresAt?.toISOString() ?? null,
    // better-auth's wire format: the granted scopes comma-joined (its accounts store them so).
    scope: fresh.account.scope ? splitScopes(fresh.account.scope).join(",") : null,
    idToken: fresh.tokens.idToken,
    providerId: account.providerId,
    accountId: account.accountId,
  };
}

/** The stored access token, refreshed first when it expires within 5 s and a refresh token is stored. */
async function liveAccessToken(app: App, em: EntityManager, requestId: string, provider: OAuthProvider, account: IAccount) {
  const tokens = open(app, requestId, account);
  if (!tokens.accessToken) throw new AuthError("FAILED_TO_GET_ACCESS_TOKEN");
  const expiresAt = account.accessTokenExpiresAt?.getTime() ?? null;
  const expiring = expiresAt !== null && expiresAt - app.clock.now().getTime() < REFRESH_MARGIN_MS;
  if (expiring && tokens.refreshToken) return refreshStored(app, em, requestId, provider, account, { ...tokens, refreshToken: tokens.refreshToken });
  return { account, tokens };
}

/** POST /get-access-token */
export async function getAccessToken(app: App, em: EntityManager, requestId: string, userId: string, ref: AccountRef) {
  const { provider, account } = await ownProviderAccount(app, em, userId, ref);
  const live = await liveAccessToken(app, em, requestId, provider, account);
  await handOutIdToken(app, em, live.tokens.idToken);
  return {
    accessToken: live.tokens.accessToken!,
    accessTokenExpiresAt: live.account.accessTokenExpiresAt?.toISOString() ?? null,
    scopes: splitScopes(live.account.scope),
    ...(live.tokens.idToken ? { idToken: live.tokens.idToken } : {}),
  };
}

export interface AccountInfoRef {
  /** The provider's account id. */
  accountId?: string | undefined;
  providerId?: string | undefined;
}

/**
 * The caller's provider account named by account id (and provider, better-auth 1.6): none named
 * or none found is 400 ACCOUNT_NOT_FOUND, two providers' accounts with that id 400 AMBIGUOUS_ACCOUNT.
 */
async function namedProviderAccount(em: EntityManager, userId: string, ref: AccountInfoRef): Promise<IAccount> {
  if (!ref.accountId) throw new AuthError("ACCOUNT_NOT_FOUND");
  const providerId = ref.providerId ? { $eq: ref.providerId, $ne: CREDENTIAL_PROVIDER } : { $ne: CREDENTIAL_PROVIDER };
  const matches = await em.find(Account, { user: userId, accountId: ref.accountId, providerId }, { orderBy: { createdAt: "asc" }, limit: 2 });
  if (matches.length > 1) throw new AuthError("AMBIGUOUS_ACCOUNT");
  if (!matches[0]) throw new AuthError("ACCOUNT_NOT_FOUND");
  return matches[0];
}

/** GET /account-info: a live user-info call with the stored (refreshed if needed) token. */
export async function accountInfo(app: App, em: EntityManager, requestId: string, userId: string, ref: AccountInfoRef) {
  const account = await namedProviderAccount(em, userId, ref);
  const provider = getProvider(app, account.providerId);
  const live = await liveAccessToken(app, em, requestId, provider, account);
  let profile;
  try {
    profile = await provider.fetchProfile(live.tokens.accessToken!);
  } catch (err) {
    throw providerFailure(app, requestId, provider.name, "account info", err);
  }
  const { id, name, email, image, emailVerified } = profile.user;
  // The standard user info (docs/wire-contract.md §5) as the provider gave it, like better-auth: a name or
  // image it did not send is left out, one it sent as null stays null.
  return { user: { id, ...(name !== undefined ? { name } : {}), email, ...(image !== undefined ? { image } : {}), emailVerified }, data: profile.raw };
}

/**
 * POST /unlink-account: never the last way to sign in (a credential account counts). The
 * user's row is locked first (SELECT ... FOR UPDATE on PostgreSQL; SQLite has one writer), so
 * two unlinks racing for the last two accounts cannot both win.
 */
export async function unlinkAccount(app: App, em: EntityManager, userId: string, ref: AccountRef): Promise<void> {
  await inTransaction(em, async (tx) => {
    await tx.findOne(User, { id: userId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const accounts = await tx.find(Account, { user: userId }, { orderBy: { createdAt: "asc" } });
    // better-auth's order: the last way in is refused before the account is even looked for.
    if (accounts.length <= 1 && (ref.providerId === CREDENTIAL_PROVIDER || oauthRuntime(app).providers.has(ref.providerId))) {
      throw new AuthError("FAILED_TO_UNLINK_LAST_ACCOUNT");
    }
    const target = accounts.find((a) => a.providerId === ref.providerId && (!ref.accountId || a.accountId === ref.accountId));
    if (!target) {
      const known = ref.providerId === CREDENTIAL_PROVIDER || oauthRuntime(app).providers.has(ref.providerId);
      throw new AuthError(known ? "ACCOUNT_NOT_FOUND" : "PROVIDER_NOT_FOUND");
    }
    if (accounts.length <= 1) throw new AuthError("FAILED_TO_UNLINK_LAST_ACCOUNT");
    await tx.nativeDelete(Account, { id: target.id });
  });
}
