import { createHash, randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { OauthAccessToken, OauthRefreshToken } from "../../db/entities/index.ts";
import type { UserRow } from "../../db/session-store/index.ts";
import { loadJose, signingKey, type JwtAlg, type SigningKey } from "../../core/index.ts";
import { issuerOf } from "./oidc-provider.rules.ts";
import { amrClaim } from "./acr.ts";

/**
 * Minting what the token endpoint answers (RFC 6749 §5.1): an access token (opaque, or an
 * RFC 9068 `at+jwt` for an RFC 8707 resource), a rotated refresh token when `offline_access` was
 * granted, and an ID token (OIDC Core §2) when `openid` was. Every token is stored as its SHA-256
 * digest only; JWTs are signed with the service's signing keys (src/core/signing-keys.ts).
 */

export interface Grant {
  clientId: string;
  user: UserRow | null;
  /** The browser session an access token lives with (null: it outlives it, as after a refresh). */
  sessionId: string | null;
  /** The session the grant started from (`sid` of ID tokens). */
  originSessionId: string | null;
  grantId: string | null;
  scopes: string[];
  resource: string | null;
  authTime: Date | null;
  nonce?: string | null;
  /** OIDC Core §5.5 `claims` request: the ID token claims asked for by name. */
  claimsRequest?: string | null;
  refresh: boolean;
  /** RFC 8176 methods of the authentication (space-separated) and the acr met; null: not recorded. */
  amr?: string | null;
  acr?: string | null;
}

export interface TokenResponse {
  access_token: string;
  token_type: "Bearer";
  expires_in: number;
  /** When the access token expires, epoch seconds (better-auth's oauth-provider answer carries it besides RFC 6749's expires_in). */
  expires_at: number;
  scope: string;
  refresh_token?: string;
  id_token?: string;
}

const secondsOf = (d: Date) => Math.floor(d.getTime() / 1000);

/** OIDC Core §5.4: the claims each scope releases, from the one user view. */
export function userClaims(user: UserRow, scopes: readonly string[], named: readonly string[] = []): { sub: string } & Record<string, unknown> {
  const all: Record<string, unknown> = {
    name: user.name,
    preferred_username: user.displayUsername ?? user.username ?? undefined,
    picture: user.image ?? undefined,
    updated_at: secondsOf(user.updatedAt),
    email: user.email,
    email_verified: user.emailVerified,
  };
  const released = new Set(named);
  if (scopes.includes("profile")) for (const c of ["name", "preferred_username", "picture", "updated_at"]) released.add(c);
  if (scopes.includes("email")) for (const c of ["email", "email_verified"]) released.add(c);
  const out: { sub: string } & Record<string, unknown> = { sub: user.id };
  for (const c of released) if (all[c] !== undefined) out[c] = all[c];
  return out;
}

/** OIDC Core §3.1.3.6 `at_hash`: the left half of the hash the signing algorithm uses (SHA-512 for Ed25519). */
export function atHash(alg: JwtAlg, accessToken: string): string {
  const digest = createHash(alg === "EdDSA" ? "sha512" : "sha256").update(accessToken, "ascii").digest();
  return digest.subarray(0, digest.length / 2).toString("base64url");
}

/** OIDC Core §5.5: the claims a `claims` request asks for by name in one of its members. */
export function namedClaims(claimsRequest: string | null | undefined, member: "id_token" | "userinfo"): string[] {
  if (!claimsRequest) return [];
  try {
    const asked = (JSON.parse(claimsRequest) as Record<string, unknown>)[member];
    return asked && typeof asked === "object" ? Object.keys(asked) : [];
  } catch {
    return [];
  }
}

const namedIdTokenClaims = (claimsRequest: string | null | undefined) => namedClaims(claimsRequest, "id_token");

/**
 * What a grant signs with: JWT access tokens with the service's `jwt.alg` key, ID tokens with
 * `oidcProvider.idTokenSigningAlg`'s (RS256 unless configured: OpenID Discovery §3 requires it).
 */
export interface MintingKeys {
  accessToken: SigningKey;
  idToken: SigningKey;
}

export async function mintingKeys(app: App): Promise<MintingKeys> {
  const [accessToken, idToken] = await Promise.all([signingKey(app), signingKey(app, app.config.oidcProvider.idTokenSigningAlg)]);
  return { accessToken, idToken };
}

async function signJwt(key: SigningKey, typ: string, claims: Record<string, unknown>): Promise<string> {
  const jose = await loadJose();
  return new jose.SignJWT(claims).setProtectedHeader({ alg: key.alg, kid: key.kid, typ }).sign(key.privateKey);
}

/**
 * `keys`: the signing keys (mintingKeys), fetched before the caller's transaction opens (making a
 * first key writes through its own connection, which a SQLite transaction in progress would block).
 */
export async function mintTokens(app: App, tx: EntityManager, grant: Grant, keys: MintingKeys): Promise<TokenResponse> {
  const cfg = app.config.oidcProvider;
  const now = app.clock.now();
  const iat = secondsOf(now);
  const exp = iat + cfg.accessTokenExpiresInSec;
  const scope = grant.scopes.join(" ");
  const iss = issuerOf(app.config);
  const sub = grant.user?.id ?? grant.clientId;
  const accessToken = grant.resource
    ? await signJwt(keys.accessToken, "at+jwt", {
        iss, sub, aud: grant.resource, client_id: grant.clientId, scope, iat, exp, jti: randomUUID(),
        ...(grant.originSessionId ? { sid: grant.originSessionId } : {}),
        ...(grant.authTime ? { auth_time: secondsOf(grant.authTime) } : {}),
      })
    : randomToken(32);
  await tx.insert(OauthAccessToken, {
    id: randomUUID(),
    tokenHash: sha256(accessToken),
    clientId: grant.clientId,
    user: (grant.user?.id ?? null) as never,
    sessionId: grant.sessionId,
    grantId: grant.grantId,
    scopes: scope,
    resource: grant.resource,
    expiresAt: new Date(exp * 1000),
    revokedAt: null,
    createdAt: now,
  });
  const answer: TokenResponse = { access_token: accessToken, token_type: "Bearer", expires_in: cfg.accessTokenExpiresInSec, expires_at: exp, scope };
  if (grant.refresh && grant.user && grant.grantId) {
    const refreshToken = randomToken(32);
    await tx.insert(OauthRefreshToken, {
      id: randomUUID(),
      tokenHash: sha256(refreshToken),
      clientId: grant.clientId,
      user: grant.user.id as never,
      sessionId: grant.originSessionId,
      grantId: grant.grantId,
      scopes: scope,
      resource: grant.resource,
      authTime: grant.authTime ?? now,
      amr: grant.amr ?? null,
      acr: grant.acr ?? null,
      expiresAt: new Date(now.getTime() + cfg.refreshTokenExpiresInSec * 1000),
      usedAt: null,
      revokedAt: null,
      createdAt: now,
    });
    answer.refresh_token = refreshToken;
  }
  if (grant.user && grant.scopes.includes("openid")) {
    answer.id_token = await signJwt(keys.idToken, "JWT", {
      ...userClaims(grant.user, grant.scopes, namedIdTokenClaims(grant.claimsRequest)),
      iss,
      aud: grant.clientId,
      iat,
      exp: iat + cfg.idTokenExpiresInSec,
      ...(grant.authTime ? { auth_time: secondsOf(grant.authTime) } : {}),
      ...(grant.acr ? { acr: grant.acr } : {}),
      ...(amrClaim(grant.amr) ? { amr: amrClaim(grant.amr) } : {}),
      ...(grant.nonce ? { nonce: grant.nonce } : {}),
      ...(grant.originSessionId ? { sid: grant.originSessionId } : {}),
      at_hash: atHash(keys.idToken.alg, accessToken),
    });
  }
  return answer;
}

/**
 * Client credentials (RFC 6749 §4.4.3): an opaque access token and nothing else, one prepared
 * insert through the session store (no transaction for one row, no signing key: no JWT here).
 */
export async function mintClientToken(app: App, clientId: string, scopes: string[]): Promise<TokenResponse> {
  const expiresIn = app.config.oidcProvider.accessTokenExpiresInSec;
  const now = app.clock.now();
  const accessToken = randomToken(32);
  const scope = scopes.join(" ");
  await app.sessions.insertClientAccessToken(
    { id: randomUUID(), tokenHash: sha256(accessToken), clientId, scopes: scope, expiresAt: new Date(now.getTime() + expiresIn * 1000), createdAt: now },
    app.orm,
  );
  return { access_token: accessToken, token_type: "Bearer", expires_in: expiresIn, expires_at: secondsOf(now) + expiresIn, scope };
}

/** Everything issued under a grant goes (RFC 9700 §4.14.2 refresh reuse; RFC 6749 §4.1.2 code replay). */
export async function revokeGrant(app: App, em: EntityManager, grantId: string): Promise<void> {
  const now = app.clock.now();
  await em.nativeUpdate(OauthRefreshToken, { grantId, revokedAt: null }, { revokedAt: now });
  await em.nativeUpdate(OauthAccessToken, { grantId, revokedAt: null }, { revokedAt: now });
}
