/**
 * ID tokens' `acr` and `amr` (OIDC Core §2, §5.5.1.1; RFC 8176) from how the session was
 * authenticated, and an essential acr enforced (docs/oidc-provider.md "acr and amr").
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Session } from "../../../src/db/entities/index.ts";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { cookieFrom, get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeToCallback, authorizeUrl, browserGet, browserPost, pkce, REDIRECT, registerClient, signUp, tokenRequest, type Browser } from "./helpers.ts";

const ONE = "urn:portcullis:acr:1fa";
const MFA = "urn:portcullis:acr:mfa";
let server: TestServer;
let rp: { clientId: string; clientSecret: string | null };

beforeAll(async () => {
  server = await startTestServer({}, { ownOrigin: true });
  rp = await registerClient(server, { skipConsent: true });
});
afterAll(async () => {
  await server.close();
});

function request(p: { challenge: string }, extra: Record<string, string> = {}) {
  return authorizeUrl(server, {
    response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid offline_access",
    state: "st4te", code_challenge: p.challenge, code_challenge_method: "S256", ...extra,
  });
}

const essential = (values: string[]) => JSON.stringify({ id_token: { acr: { essential: true, values } } });

/** authorize → code → tokens; the decoded ID token and the refresh token. */
async function idTokenFor(browser: Browser, extra: Record<string, string> = {}) {
  const p = pkce();
  const callback = await authorizeToCallback(server, browser, request(p, extra));
  expect(callback.searchParams.get("error"), callback.toString()).toBeNull();
  const res = await tokenRequest(server, { grant_type: "authorization_code", code: callback.searchParams.get("code")!, code_verifier: p.verifier, redirect_uri: REDIRECT }, rp);
  expect(res.status, res.text).toBe(200);
  return { claims: decodeJwt(res.body.id_token), refreshToken: res.body.refresh_token as string };
}

async function signIn(email: string): Promise<Browser & { pending: boolean }> {
  const res = await post(`${server.auth}/sign-in/email`, { email, password: "password123" }, { headers: { origin: new URL(server.url).origin } });
  expect(res.status, res.text).toBe(200);
  const pending = res.body.twoFactorRedirect === true;
  return { cookie: cookieFrom(res.headers, pending ? "portcullis.two_factor" : undefined)!, userId: res.body.user?.id, email, origin: new URL(server.url).origin, pending };
}

describe("amr and acr", () => {
  it("a password session: amr [pwd], the one-factor class; a refresh's ID token repeats them", async () => {
    const browser = await signUp(server);
    const { claims, refreshToken } = await idTokenFor(browser);
    expect(claims.amr).toEqual(["pwd"]);
    expect(claims.acr).toBe(ONE);
    const refreshed = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: refreshToken }, rp);
    expect(refreshed.status).toBe(200);
    const again = decodeJwt(refreshed.body.id_token);
    expect(again.amr).toEqual(["pwd"]);
    expect(again.acr).toBe(ONE);
    const signedIn = await signIn(browser.email);
    expect((await idTokenFor(signedIn)).claims.amr).toEqual(["pwd"]);
  });

  it("a session that recorded nothing (older than the record) gets neither claim, never a guess", async () => {
    const browser = await signUp(server);
    await server.portcullis.app.orm.em.fork().nativeUpdate(Session, { user: browser.userId }, { amr: null });
    const { claims } = await idTokenFor(browser);
    expect(claims.amr).toBeUndefined();
    expect(claims.acr).toBeUndefined();
  });

  it("two factors: amr [mfa, otp] and the mfa class, which an essential mfa request accepts", async () => {
    const first = await signUp(server);
    const enabled = await post(`${server.auth}/two-factor/enable`, { password: "password123" }, { headers: { cookie: first.cookie, origin: first.origin } });
    expect(enabled.status, enabled.text).toBe(200);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    const verified = await post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()) }, { headers: { cookie: first.cookie, origin: first.origin } });
    expect(verified.status, verified.text).toBe(200);
    const pending = await signIn(first.email);
    expect(pending.pending).toBe(true);
    server.clock.advance(30_000);
    const done = await post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()) }, { headers: { cookie: pending.cookie, origin: first.origin } });
    expect(done.status, done.text).toBe(200);
    const browser = { ...first, cookie: cookieFrom(done.headers)! };
    const { claims } = await idTokenFor(browser, { claims: essential([MFA]) });
    expect(claims.amr).toEqual(["mfa", "otp"]);
    expect(claims.acr).toBe(MFA);
    // A voluntary one-factor preference is met by two factors, and answered as asked.
    expect((await idTokenFor(browser, { acr_values: ONE })).claims.acr).toBe(ONE);
  });

  it("a voluntary acr_values the session does not reach still issues a code, with the class it did reach", async () => {
    const { claims } = await idTokenFor(await signUp(server), { acr_values: MFA });
    expect(claims.acr).toBe(ONE);
  });

  it("an essential mfa request of a one-factor session asks for a sign-in once, then answers unmet_authentication_requirements", async () => {
    const browser = await signUp(server);
    const p = pkce();
    const first = await browserGet(browser, request(p, { claims: essential([MFA]) }));
    expect(first.status).toBe(302);
    const login = new URL(first.headers.get("location")!, server.url);
    expect(login.pathname).toMatch(/\/sign-in$/);
    server.clock.advance(1000);
    const again = await signIn(browser.email);
    const res = await browserPost(again, `${server.auth}/oauth2/continue`, { oauth_query: login.search.slice(1) });
    expect(res.status, res.text).toBe(200);
    const callback = new URL(res.body.url);
    expect(callback.origin + callback.pathname).toBe(REDIRECT);
    expect(callback.searchParams.get("error")).toBe("unmet_authentication_requirements");
    expect(callback.searchParams.get("state")).toBe("st4te");
  });

  it("prompt=none with an unmet essential acr: login_required", async () => {
    const res = await browserGet(await signUp(server), request(pkce(), { prompt: "none", claims: essential([MFA]) }));
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("login_required");
  });

  it("discovery lists the acr values and the claims", async () => {
    const meta = (await get(`${server.auth}/.well-known/openid-configuration`)).body;
    expect(meta.acr_values_supported).toEqual([ONE, MFA]);
    expect(meta.claims_supported).toEqual(expect.arrayContaining(["acr", "amr"]));
  });
});
