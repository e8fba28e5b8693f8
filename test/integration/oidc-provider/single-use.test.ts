/**
 * Codes and refresh tokens are spent by one conditional update in the transaction that mints
 * what they buy (src/modules/oidc-provider/grants.ts): a refused request still spends its code,
 * and of two requests racing with one code or one refresh token exactly one gets tokens, while
 * the other, a replay, revokes what the winner got.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestServer } from "../../harness/server.ts";
import { authorizeToCallback, authorizeUrl, pkce, REDIRECT, signUp, tokenRequest, userinfo, type Browser, serverWithClient, type RelyingParty } from "./helpers.ts";

let server: TestServer;
let rp: RelyingParty;
beforeAll(async () => ({ server, rp } = await serverWithClient()));
afterAll(() => server.close());

async function codeFor(browser: Browser) {
  const p = pkce();
  const callback = await authorizeToCallback(server, browser, authorizeUrl(server, {
    response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid email offline_access",
    state: "st4te", nonce: "n0nce", code_challenge: p.challenge, code_challenge_method: "S256",
  }));
  return { code: callback.searchParams.get("code")!, verifier: p.verifier };
}

const exchange = (code: string, verifier: string) =>
  tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT }, rp);
const refresh = (token: string) => tokenRequest(server, { grant_type: "refresh_token", refresh_token: token }, rp);

describe("single use under refusal and races", () => {
  it("a code refused for a wrong verifier is spent: the right verifier afterwards gets invalid_grant", async () => {
    const { code, verifier } = await codeFor(await signUp(server));
    expect((await exchange(code, pkce().verifier)).body.error).toBe("invalid_grant");
    const after = await exchange(code, verifier);
    expect(after.status).toBe(400);
    expect(after.body.error).toBe("invalid_grant");
  });

  it("two exchanges of one code at once: one gets tokens, the other invalid_grant, and the winner's tokens are revoked", async () => {
    const { code, verifier } = await codeFor(await signUp(server));
    const answers = await Promise.all([exchange(code, verifier), exchange(code, verifier)]);
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.find((a) => a.status !== 200)!.body.error).toBe("invalid_grant");
    expect((await userinfo(server, won[0]!.body.access_token)).status).toBe(401);
    expect((await refresh(won[0]!.body.refresh_token)).body.error).toBe("invalid_grant");
  });

  it("two refreshes with one token at once: one rotates, the other invalid_grant, and the whole grant is revoked", async () => {
    const { code, verifier } = await codeFor(await signUp(server));
    const first = (await exchange(code, verifier)).body;
    const answers = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    const won = answers.filter((a) => a.status === 200);
    expect(won).toHaveLength(1);
    expect(answers.find((a) => a.status !== 200)!.body.error).toBe("invalid_grant");
    expect((await refresh(won[0]!.body.refresh_token)).body.error).toBe("invalid_grant");
    expect((await userinfo(server, won[0]!.body.access_token)).status).toBe(401);
    expect((await userinfo(server, first.access_token)).status).toBe(401);
  });
});
