import type { Aead } from "../../crypto/aead.ts";
import type { IAccount } from "../../db/entities/index.ts";
import type { TokenSet } from "../../social-providers/index.ts";

/**
 * Provider tokens at rest (docs/wire-contract.md §5): each sealed with AES-256-GCM, its associated data
 * naming the account row and the column, so a sealed token copied into another row or column
 * does not open.
 */
type TokenColumn = "access_token" | "refresh_token" | "id_token";

function aad(accountId: string, column: TokenColumn): string {
  return `accounts:${accountId}:${column}`;
}

/**
 * Tokens as a grant delivers them. An ID-token sign-in may come without an access token: the
 * stored one (if any) is then kept.
 */
export type GrantedTokens = Omit<TokenSet, "accessToken"> & { accessToken: string | null };

export interface SealedTokens {
  accessToken?: string;
  refreshToken?: string;
  idToken?: string;
  accessTokenExpiresAt?: Date | null;
  refreshTokenExpiresAt?: Date | null;
  scope?: string;
}

/**
 * The account columns for a fresh token set. A response without an access, refresh or id token
 * keeps the stored ones (RFC 6749 §6: the server may keep the refresh token). The scope is kept
 * as the provider wrote it; one without `scope` was granted what was asked (RFC 6749 §5.1):
 * `fallbackScope`, or the stored scope when that is null.
 */
export function sealTokens(aead: Aead, accountId: string, tokens: GrantedTokens, fallbackScope: string | null, now: Date): SealedTokens {
  const at = (sec: number | null) => (sec === null ? null : new Date(now.getTime() + sec * 1000));
  const scope = tokens.scope ?? fallbackScope;
  return {
    ...(tokens.accessToken
      ? { accessToken: aead.encrypt(tokens.accessToken, aad(accountId, "access_token")), accessTokenExpiresAt: at(tokens.expiresInSec) }
      : {}),
    ...(tokens.refreshToken
      ? { refreshToken: aead.encrypt(tokens.refreshToken, aad(accountId, "refresh_token")), refreshTokenExpiresAt: at(tokens.refreshTokenExpiresInSec) }
      : {}),
    ...(tokens.idToken ? { idToken: aead.encrypt(tokens.idToken, aad(accountId, "id_token")) } : {}),
    ...(scope !== null ? { scope } : {}),
  };
}

export interface OpenedTokens {
  accessToken: string | null;
  refreshToken: string | null;
  idToken: string | null;
}

/** Throws AeadError when a token does not open (tampered, or sealed under a retired key). */
export function openTokens(aead: Aead, account: Pick<IAccount, "id" | "accessToken" | "refreshToken" | "idToken">): OpenedTokens {
  const open = (value: string | null | undefined, column: TokenColumn) => (value ? aead.decrypt(value, aad(account.id, column)) : null);
  return {
    accessToken: open(account.accessToken, "access_token"),
    refreshToken: open(account.refreshToken, "refresh_token"),
    idToken: open(account.idToken, "id_token"),
  };
}

/**
 * A grant without a new access, refresh or id token keeps the stored ones (sealTokens): those
 * are sealed again, so this write moves every column to the newest key (secret rotation: docs/configuration.md).
 */
export function resealKept(aead: Aead, accountId: string, fresh: GrantedTokens, stored: OpenedTokens): { accessToken?: string; refreshToken?: string; idToken?: string } {
  const reseal = (column: TokenColumn, value: string | null, replaced: string | null) => (!replaced && value ? aead.encrypt(value, aad(accountId, column)) : undefined);
  const kept = {
    accessToken: reseal("access_token", stored.accessToken, fresh.accessToken),
    refreshToken: reseal("refresh_token", stored.refreshToken, fresh.refreshToken),
    idToken: reseal("id_token", stored.idToken, fresh.idToken),
  };
  return Object.fromEntries(Object.entries(kept).filter(([, v]) => v !== undefined));
}
