/**
 * The sweeper and the OpenID provider's tables (src/modules/maintenance/sweeper.ts): expired
 * access and refresh tokens go; a spent code stays while a token of its grant lives, so that a
 * replay of it still revokes them (RFC 6749 §4.1.2), and goes with the last of them.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OauthAccessToken, OauthCode, OauthRefreshToken } from "../../../src/db/entities/index.ts";
import { HOUR, MINUTE } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import type { TestServer } from "../../harness/server.ts";
import { authorizeToCallback, authorizeUrl, pkce, REDIRECT, signUp, tokenRequest, userinfo, serverWithClient, type RelyingParty } from "./helpers.ts";

let server: TestServer;
let rp: RelyingParty;
beforeAll(async () => ({ server, rp } = await serverWithClient({ sweeper: { intervalSec: 0 }, oidcProvider: { refreshTokenExpiresInSec: 3 * HOUR / 1000 } })));
afterAll(() => server.close());

const rows = async () => {
  const em = server.portcullis.app.orm.em.fork();
  return { codes: await em.count(OauthCode, {}), access: await em.count(OauthAccessToken, {}), refresh: await em.count(OauthRefreshToken, {}) };
};

async function grant(scope: string) {
  const p = pkce();
  const callback = await authorizeToCallback(server, await signUp(server), authorizeUrl(server, {
    response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope, state: "s", code_challenge: p.challenge, code_challenge_method: "S256",
  }));
  const code = callback.searchParams.get("code")!;
  const tokens = await tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: p.verifier, redirect_uri: REDIRECT }, rp);
  expect(tokens.status, tokens.text).toBe(200);
  return { code, verifier: p.verifier, tokens: tokens.body };
}

describe(`sweeping the OpenID provider's tables (${testDialect})`, () => {
  it("expired tokens go; a spent code stays while its grant's refresh token lives, still revoking it on replay, then goes", async () => {
    const offline = await grant("openid offline_access");
    const online = await grant("openid");
    expect(await rows()).toEqual({ codes: 2, access: 2, refresh: 1 });

    server.clock.advance(HOUR + MINUTE); // access tokens (1 h) and codes (60 s) expired; the refresh token (3 h) lives
    const first = await server.portcullis.sweeper.sweepOnce();
    expect(first).toMatchObject({ oauthAccessTokens: 2, oauthRefreshTokens: 0, oauthCodes: 1 });
    expect(await rows()).toEqual({ codes: 1, access: 0, refresh: 1 });
    expect((await userinfo(server, online.tokens.access_token)).status).toBe(401);

    // The kept code, replayed, still ends the refresh token it bought.
    const replay = await tokenRequest(server, { grant_type: "authorization_code", code: offline.code, code_verifier: offline.verifier, redirect_uri: REDIRECT }, rp);
    expect(replay.body.error).toBe("invalid_grant");
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: offline.tokens.refresh_token }, rp)).body.error).toBe("invalid_grant");

    // Revoked, its grant keeps nothing alive: the code goes now; the refresh token once it expires.
    expect((await server.portcullis.sweeper.sweepOnce()).oauthCodes).toBe(1);
    server.clock.advance(2 * HOUR);
    expect((await server.portcullis.sweeper.sweepOnce()).oauthRefreshTokens).toBe(1);
    expect(await rows()).toEqual({ codes: 0, access: 0, refresh: 0 });
  });
});
