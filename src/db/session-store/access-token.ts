import { mapUser, USER_COLUMNS, type AccessTokenWithUser } from "./types.ts";

/**
 * An OAuth access token as the userinfo and introspection endpoints read it (docs/oidc-provider.md
 * "Tokens"): one indexed lookup by the SHA-256 of the token, prepared once (docs/performance.md).
 * The token's 10 columns, the `claims` request of the authorization its grant started from (the
 * grant's id is its code row's, joined by primary key: OIDC Core §5.5 `userinfo` claims, through
 * every refresh), then the user's (mapAccessTokenRow's order); `$1` / `?` appended by the driver.
 * The spent code row is thus the grant's record: it goes with its user or client, never alone. */
export const ACCESS_TOKEN_LOOKUP = `SELECT t.id AS t_id, t.client_id AS t_client_id, t.user_id AS t_user_id, t.session_id AS t_session_id,
  t.scopes AS t_scopes, t.resource AS t_resource, t.expires_at AS t_expires_at, t.revoked_at AS t_revoked_at, t.created_at AS t_created_at,
  s.expires_at AS s_expires_at, c.claims AS c_claims, ${USER_COLUMNS}
  FROM oauth_access_tokens t LEFT JOIN sessions s ON s.id = t.session_id LEFT JOIN oauth_codes c ON c.id = t.grant_id LEFT JOIN users u ON u.id = t.user_id
  WHERE t.token_hash = `;

export function mapAccessTokenRow(r: readonly unknown[], date: (v: unknown) => Date, bool: (v: unknown) => boolean): AccessTokenWithUser {
  return {
    token: {
      id: r[0] as string,
      clientId: r[1] as string,
      userId: r[2] as string | null,
      sessionId: r[3] as string | null,
      scopes: r[4] as string,
      resource: r[5] as string | null,
      expiresAt: date(r[6]),
      revokedAt: r[7] == null ? null : date(r[7]),
      createdAt: date(r[8]),
      sessionExpiresAt: r[9] == null ? null : date(r[9]),
      claimsRequest: r[10] as string | null,
    },
    user: r[11] == null ? null : mapUser(r, 11, date, bool),
  };
}

export const CLIENT_ACCESS_TOKEN_INSERT = `INSERT INTO oauth_access_tokens (id, token_hash, client_id, user_id, session_id, grant_id, scopes, resource, expires_at, revoked_at, created_at)
  VALUES (?, ?, ?, NULL, NULL, NULL, ?, NULL, ?, NULL, ?)`;
