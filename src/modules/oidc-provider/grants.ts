import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { codeChallengeS256 } from "../../crypto/pkce.ts";
import { constantTimeEqual, sha256 } from "../../crypto/tokens.ts";
import { OauthCode, OauthRefreshToken, Session, User } from "../../db/entities/index.ts";
import { inTransaction } from "../../db/transaction.ts";
import { OAuthError } from "../../errors.ts";
import { isBanActive, userRow } from "../../core/index.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { allowedScopes, authenticateClient, type Client } from "./clients.ts";
import { PKCE_VALUE, parseScopes } from "./oidc-provider.rules.ts";
import { mintClientToken, mintingKeys, mintTokens, revokeGrant, type TokenResponse } from "./tokens.ts";

/** The token endpoint's parameters (RFC 6749 §4.1.3, §4.4.2, §6). */
export interface TokenRequest {
  grant_type?: string | undefined;
  code?: string | undefined;
  redirect_uri?: string | undefined;
  code_verifier?: string | undefined;
  refresh_token?: string | undefined;
  scope?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
  resource?: string | undefined;
}

const invalidGrant = (description: string) => new OAuthError("INVALID_GRANT", description, "invalid_grant");

/** A user who may still get tokens: present and not banned (docs/wire-contract.md §4). */
async function liveUser(app: App, em: EntityManager, userId: string): Promise<UserRow> {
  const user = await em.findOne(User, { id: userId }, { disableIdentityMap: true });
  const row = user ? userRow(user) : null;
  if (!row || isBanActive(row, app.clock.now())) throw invalidGrant("the user cannot sign in");
  return row;
}

function requireGrantType(client: Client, grantType: string): void {
  if (!client.grantTypes.includes(grantType)) throw new OAuthError("UNAUTHORIZED_CLIENT", `the client may not use ${grantType}`, "unauthorized_client");
}

/**
 * RFC 6749 §4.1.3 with RFC 7636 §4.6: single use by one conditional update, in the same
 * transaction as the tokens it buys (one commit); a request that fails a check still spends the
 * code. A code presented a second time revokes every token issued from it (RFC 6749 §4.1.2).
 */
async function authorizationCode(app: App, em: EntityManager, client: Client, input: TokenRequest): Promise<TokenResponse> {
  if (!input.code || input.code.length > 256) throw new OAuthError("INVALID_REQUEST", "code is required");
  if (input.code_verifier !== undefined && !PKCE_VALUE.test(input.code_verifier)) throw invalidGrant("code_verifier is malformed");
  const row = await em.findOne(OauthCode, { codeHash: sha256(input.code) }, { disableIdentityMap: true });
  if (!row) throw invalidGrant("invalid code");
  const now = app.clock.now();
  const spend = (tx: EntityManager) => spendOnce(tx.nativeUpdate(OauthCode, { id: row.id, usedAt: null }, { usedAt: now }));
  let user: UserRow;
  try {
    if (row.clientId !== client.clientId) throw invalidGrant("the code was issued to another client");
    if (row.expiresAt.getTime() <= now.getTime()) throw invalidGrant("the code has expired");
    if (input.redirect_uri !== row.redirectUri) throw invalidGrant("redirect_uri does not match the authorization request");
    // RFC 9700 §4.8.2: a verifier for a code issued without a challenge is a downgrade attempt.
    if (row.codeChallenge === "" ? input.code_verifier !== undefined : !input.code_verifier || !constantTimeEqual(codeChallengeS256(input.code_verifier), row.codeChallenge)) {
      throw invalidGrant("code_verifier does not match the code_challenge");
    }
    // The session that approved it must still be there: a sign-out in between ends the grant.
    const session = await em.findOne(Session, { id: row.sessionId }, { disableIdentityMap: true, fields: ["id", "expiresAt"] });
    if (!session || session.expiresAt.getTime() <= now.getTime()) throw invalidGrant("the session that approved the code has ended");
    user = await liveUser(app, em, row.user.id);
  } catch (err) {
    // Refused, yet spent all the same; a replay is told as such (and revokes the grant).
    await replayed(app, em, () => spend(em), row.id);
    throw err;
  }
  const scopes = parseScopes(row.scopes);
  const keys = await mintingKeys(app);
  return replayed(app, em, () => inTransaction(em, async (tx) => {
    await spend(tx);
    return mintTokens(app, tx, {
      clientId: client.clientId,
      user,
      sessionId: row.sessionId,
      originSessionId: row.sessionId,
      grantId: row.id,
      scopes,
      resource: row.resource ?? null,
      authTime: row.authTime,
      nonce: row.nonce,
      claimsRequest: row.claims,
      amr: row.amr ?? null,
      acr: row.acr ?? null,
      refresh: scopes.includes("offline_access") && client.grantTypes.includes("refresh_token"),
    }, keys);
  }), row.id, "the code was already used");
}

/** A single-use row found spent by its conditional update (0 rows): its grant is revoked once the write has rolled back. */
class AlreadySpent extends Error {}

async function spendOnce(updated: Promise<number>): Promise<void> {
  if ((await updated) !== 1) throw new AlreadySpent();
}

/** Runs `work`; when it finds its row spent, revokes the grant and answers invalid_grant. */
async function replayed<T>(app: App, em: EntityManager, work: () => Promise<T>, grantId: string, message = "the code was already used"): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof AlreadySpent)) throw err;
    await revokeGrant(app, em, grantId);
    throw invalidGrant(message);
  }
}

/** RFC 6749 §6 with rotation (RFC 9700 §4.14.2): a rotated token used again revokes its whole grant. */
async function refreshToken(app: App, em: EntityManager, client: Client, input: TokenRequest): Promise<TokenResponse> {
  if (!input.refresh_token || input.refresh_token.length > 256) throw new OAuthError("INVALID_REQUEST", "refresh_token is required");
  const row = await em.findOne(OauthRefreshToken, { tokenHash: sha256(input.refresh_token) }, { disableIdentityMap: true });
  if (!row || row.clientId !== client.clientId) throw invalidGrant("invalid refresh token");
  const now = app.clock.now();
  if (row.revokedAt) throw invalidGrant("the refresh token was revoked");
  if (row.expiresAt.getTime() <= now.getTime()) throw invalidGrant("the refresh token has expired");
  const granted = parseScopes(row.scopes);
  const scopes = input.scope === undefined ? granted : parseScopes(input.scope);
  if (scopes.length === 0 || scopes.some((s) => !granted.includes(s))) throw new OAuthError("INVALID_SCOPE", "scope exceeds the original grant", "invalid_scope");
  const user = await liveUser(app, em, row.user.id);
  const keys = await mintingKeys(app);
  // Rotation: the old token spent by one conditional update, in the transaction that mints the new pair (one commit).
  return replayed(app, em, () => inTransaction(em, async (tx) => {
    await spendOnce(tx.nativeUpdate(OauthRefreshToken, { id: row.id, usedAt: null, revokedAt: null }, { usedAt: now }));
    return mintTokens(app, tx, {
      clientId: client.clientId,
      user,
      sessionId: null,
      originSessionId: row.sessionId ?? null,
      grantId: row.grantId,
      scopes,
      resource: row.resource ?? null,
      authTime: row.authTime,
      amr: row.amr ?? null,
      acr: row.acr ?? null,
      // The grant keeps its scopes: a narrower refresh does not shrink the next refresh token.
      refresh: true,
    }, keys).then(async (answer) => {
      if (scopes.length !== granted.length && answer.refresh_token) {
        await tx.nativeUpdate(OauthRefreshToken, { tokenHash: sha256(answer.refresh_token) }, { scopes: row.scopes });
      }
      return answer;
    });
  }), row.grantId, "the refresh token was already used");
}

/** RFC 6749 §4.4: a confidential client acting for itself; no refresh token, no ID token. */
async function clientCredentials(app: App, em: EntityManager, client: Client, input: TokenRequest): Promise<TokenResponse> {
  if (client.isPublic) throw new OAuthError("UNAUTHORIZED_CLIENT", "a public client may not use client_credentials", "unauthorized_client");
  const offered = allowedScopes(app, client).filter((s) => s !== "openid" && s !== "offline_access");
  const scopes = input.scope === undefined ? [] : parseScopes(input.scope);
  if (scopes.some((s) => !offered.includes(s))) throw new OAuthError("INVALID_SCOPE", "scope is not allowed for this client", "invalid_scope");
  return mintClientToken(app, client.clientId, scopes);
}

/**
 * A grant another family decides (core/registry.ts TokenGrant: the device code of RFC 8628):
 * tokens for the user it names, within what the client may ask for; a refresh token when
 * `offline_access` was granted, as for a code.
 */
async function registeredGrant(app: App, em: EntityManager, client: Client, input: TokenRequest, grantType: string): Promise<TokenResponse> {
  const grant = app.registry.tokenGrants.find((g) => g.grantType === grantType)!;
  const allowed = allowedScopes(app, client);
  const redeemed = await grant.redeem(app, em, input as Record<string, string | undefined>, client.clientId);
  const scopes = parseScopes(redeemed.scope).filter((s) => allowed.includes(s));
  const user = await liveUser(app, em, redeemed.userId);
  const keys = await mintingKeys(app);
  return inTransaction(em, (tx) =>
    mintTokens(app, tx, {
      clientId: client.clientId, user, sessionId: null, originSessionId: null, grantId: randomUUID(), scopes, resource: null,
      authTime: app.clock.now(), refresh: scopes.includes("offline_access") && client.grantTypes.includes("refresh_token"),
    }, keys),
  );
}

const GRANTS: Record<string, (app: App, em: EntityManager, client: Client, input: TokenRequest) => Promise<TokenResponse>> = {
  authorization_code: authorizationCode,
  refresh_token: refreshToken,
  client_credentials: clientCredentials,
};

/** Every grant type the token endpoint takes (the metadata's `grant_types_supported`). */
export const supportedGrants = (app: App): string[] => [...Object.keys(GRANTS), ...app.registry.tokenGrants.map((g) => g.grantType)];

/** POST /oauth2/token. */
export async function token(app: App, em: EntityManager, authorization: string | null, input: TokenRequest): Promise<TokenResponse> {
  const grantType = input.grant_type;
  if (!grantType) throw new OAuthError("INVALID_REQUEST", "grant_type is required");
  const builtIn = Object.hasOwn(GRANTS, grantType) ? GRANTS[grantType] : undefined;
  if (!builtIn && !app.registry.tokenGrants.some((g) => g.grantType === grantType)) throw new OAuthError("UNSUPPORTED_GRANT_TYPE", "unsupported grant_type");
  const client = await authenticateClient(app, em, authorization, input, { allowPublic: grantType !== "client_credentials" });
  requireGrantType(client, grantType);
  return builtIn ? builtIn(app, em, client, input) : registeredGrant(app, em, client, input, grantType);
}
