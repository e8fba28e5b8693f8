/**
 * A second real relying party: passport-openidconnect (no PKCE support), against a service whose
 * `oidcProvider.requirePkce` is off, which lets a confidential client go without PKCE; a public
 * client still needs it, and a verifier sent for a code issued without a challenge is refused.
 */
import { Strategy } from "passport-openidconnect";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeToCallback, authorizeUrl, pkce, REDIRECT, registerClient, signUp, startAuthorize, tokenRequest } from "./helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ oidcProvider: { requirePkce: false } }, { ownOrigin: true });
});
afterAll(async () => {
  await server.close();
});

interface Outcome {
  redirect?: string;
  user?: { id: string; displayName?: string; emails?: { value: string }[] };
  fail?: unknown;
  error?: unknown;
}

/** One pass of the strategy, as passport runs it for a request (its augmented actions). */
function run(strategy: Strategy, req: Record<string, unknown>): Promise<Outcome> {
  return new Promise((resolve) => {
    const s = Object.create(strategy) as Strategy & Record<string, unknown>;
    s.redirect = (url: string) => resolve({ redirect: url });
    s.success = (user: Outcome["user"]) => resolve({ user });
    s.fail = (fail: unknown) => resolve({ fail });
    s.error = (error: unknown) => resolve({ error });
    s.authenticate(req as never, {});
  });
}

describe("passport-openidconnect as the relying party", () => {
  it("signs a user in (authorization code, state, userinfo profile)", async () => {
    const rp = await registerClient(server, { authMethod: "client_secret_post" });
    const strategy = new Strategy(
      {
        issuer: server.auth,
        authorizationURL: `${server.auth}/oauth2/authorize`,
        tokenURL: `${server.auth}/oauth2/token`,
        userInfoURL: `${server.auth}/oauth2/userinfo`,
        clientID: rp.clientId,
        clientSecret: rp.clientSecret!,
        callbackURL: REDIRECT,
        scope: ["profile", "email"],
      },
      (_issuer: string, profile: unknown, done: (err: unknown, user: unknown) => void) => done(null, profile),
    );
    const session: Record<string, unknown> = {};
    const request = (url: string) => ({ url, query: Object.fromEntries(new URL(url, "https://rp.example.test").searchParams), session, headers: { host: "rp.example.test" }, connection: { encrypted: true } });
    const start = await run(strategy, request("/login"));
    expect(start.redirect).toMatch(new RegExp(`^${server.auth}/oauth2/authorize\\?`));
    const browser = await signUp(server);
    const callback = await authorizeToCallback(server, browser, start.redirect!);
    expect(callback.searchParams.get("code")).toEqual(expect.any(String));
    const done = await run(strategy, request(`${callback.pathname}${callback.search}`));
    expect(done.error ?? done.fail).toBeUndefined();
    expect(done.user).toMatchObject({ id: browser.userId, displayName: "Ada Lovelace", emails: [{ value: browser.email }] });
  });

  it("still requires PKCE of a public client, and refuses a verifier for a code issued without a challenge", async () => {
    const pub = await registerClient(server, { authMethod: "none" });
    const browser = await signUp(server);
    const refused = await startAuthorize(server, browser, authorizeUrl(server, { response_type: "code", client_id: pub.clientId, redirect_uri: REDIRECT, scope: "openid" }));
    expect(refused.searchParams.get("error")).toBe("invalid_request");
    const rp = await registerClient(server);
    const callback = await authorizeToCallback(server, browser, authorizeUrl(server, { response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid" }));
    const res = await tokenRequest(server, { grant_type: "authorization_code", code: callback.searchParams.get("code")!, redirect_uri: REDIRECT, code_verifier: pkce().verifier }, rp);
    expect(res.body.error).toBe("invalid_grant");
  });
});
