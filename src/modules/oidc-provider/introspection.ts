import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { OauthAccessToken, OauthRefreshToken } from "../../db/entities/index.ts";
import type { AccessTokenWithUser } from "../../db/session-store/index.ts";
import { OAuthError } from "../../errors.ts";
import { isBanActive } from "../../core/index.ts";
import { authenticateClient } from "./clients.ts";
import { issuerOf, parseScopes } from "./oidc-provider.rules.ts";
import { namedClaims, revokeGrant, userClaims } from "./tokens.ts";

/**
 * What a presented token is worth now (RFC 7662, RFC 7009, OIDC Core §5.3): its row, not
 * revoked, not expired, its user present and not banned, and, for a token bound to the browser
 * session that approved it, that session still alive.
 */

const secondsOf = (d: Date) => Math.floor(d.getTime() / 1000);

/**
 * The token and its user in one indexed lookup through the session store (prepared once, no ORM,
 * nothing written: docs/performance.md "OAuth"); a token bound to a session needs it alive.
 */
async function liveAccessToken(app: App, token: string): Promise<AccessTokenWithUser | null> {
  if (!token || token.length > 4096) return null;
  const found = await app.sessions.findByAccessTokenHash(sha256(token));
  const now = app.clock.now().getTime();
  if (!found) return null;
  const { token: row, user } = found;
  if (row.revokedAt || row.expiresAt.getTime() <= now) return null;
  if (row.sessionId && (!row.sessionExpiresAt || row.sessionExpiresAt.getTime() <= now)) return null;
  if (row.userId && (!user || isBanActive(user, app.clock.now()))) return null;
  return found;
}

function invalidToken(description: string): OAuthError {
  return new OAuthError("INVALID_ACCESS_TOKEN", description, "invalid_token", { "www-authenticate": `Bearer error="invalid_token", error_description="${description}"` });
}

/** GET|POST /oauth2/userinfo (OIDC Core §5.3): a bearer access token with `openid`. */
export async function userInfo(app: App, authorization: string | null, bodyToken: string | undefined) {
  const bearer = authorization && /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, "").trim() : null;
  const token = bearer ?? bodyToken;
  if (!token) throw new OAuthError("INVALID_ACCESS_TOKEN", "an access token is required", "invalid_token", { "www-authenticate": 'Bearer realm="userinfo"' });
  const live = await liveAccessToken(app, token);
  if (!live?.user) throw invalidToken("the access token is invalid or expired");
  const scopes = parseScopes(live.token.scopes);
  if (!scopes.includes("openid")) {
    throw new OAuthError("INSUFFICIENT_SCOPE", "the access token lacks the openid scope", "insufficient_scope", { "www-authenticate": 'Bearer error="insufficient_scope", scope="openid"' });
  }
  // The scopes' claims, and those the authorization's `claims` request named for userinfo (OIDC Core §5.5).
  return userClaims(live.user, scopes, namedClaims(live.token.claimsRequest, "userinfo"));
}

export interface TokenInput {
  token?: string | undefined;
  token_type_hint?: string | undefined;
  client_id?: string | undefined;
  client_secret?: string | undefined;
}

/** POST /oauth2/introspect (RFC 7662 §2): only the calling client's own tokens are active to it. */
export async function introspect(app: App, em: EntityManager, authorization: string | null, input: TokenInput) {
  const client = await authenticateClient(app, em, authorization, input, { allowPublic: false });
  if (!input.token) throw new OAuthError("INVALID_REQUEST", "token is required");
  const iss = issuerOf(app.config);
  const tryRefresh = async () => {
    const row = await em.findOne(OauthRefreshToken, { tokenHash: sha256(input.token!) }, { disableIdentityMap: true });
    const now = app.clock.now();
    if (!row || row.clientId !== client.clientId || row.revokedAt || row.usedAt || row.expiresAt.getTime() <= now.getTime()) return null;
    return { active: true as const, token_type: "refresh_token", scope: row.scopes, client_id: row.clientId, sub: row.user.id, iat: secondsOf(row.createdAt), exp: secondsOf(row.expiresAt), iss, ...(row.sessionId ? { sid: row.sessionId } : {}) };
  };
  const tryAccess = async () => {
    const row = (await liveAccessToken(app, input.token!))?.token;
    if (!row || row.clientId !== client.clientId) return null;
    return {
      active: true as const, token_type: "Bearer", scope: row.scopes, client_id: row.clientId, sub: row.userId ?? row.clientId,
      iat: secondsOf(row.createdAt), exp: secondsOf(row.expiresAt), iss, ...(row.resource ? { aud: row.resource } : {}), ...(row.sessionId ? { sid: row.sessionId } : {}),
    };
  };
  const order = input.token_type_hint === "refresh_token" ? [tryRefresh, tryAccess] : [tryAccess, tryRefresh];
  for (const attempt of order) {
    const answer = await attempt();
    if (answer) return answer;
  }
  return { active: false as const };
}

/** POST /oauth2/revoke (RFC 7009 §2): 200 whatever the token; a refresh token takes its grant's tokens with it. */
export async function revoke(app: App, em: EntityManager, authorization: string | null, input: TokenInput) {
  const client = await authenticateClient(app, em, authorization, input, { allowPublic: true });
  if (!input.token) throw new OAuthError("INVALID_REQUEST", "token is required");
  const digest = sha256(input.token);
  const refresh = await em.findOne(OauthRefreshToken, { tokenHash: digest, clientId: client.clientId }, { disableIdentityMap: true });
  if (refresh) {
    await revokeGrant(app, em, refresh.grantId);
    return {};
  }
  await em.nativeUpdate(OauthAccessToken, { tokenHash: digest, clientId: client.clientId, revokedAt: null }, { revokedAt: app.clock.now() });
  return {};
}
