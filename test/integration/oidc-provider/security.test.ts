/**
 * The attacks on the authorization flow, each as a test (docs/oidc-provider.md "Security"):
 * code replay, PKCE downgrade, redirect URI tricks, refresh token reuse, borrowed sessions,
 * consent CSRF, and what ends a grant.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OauthClient, OauthConsent, OauthRefreshToken } from "../../../src/db/entities/index.ts";
import { post } from "../../harness/http.ts";
import { SECOND } from "../../harness/clock.ts";
import { bootstrapAdmin } from "../../harness/admin-helpers.ts";
import type { TestServer } from "../../harness/server.ts";
import {
  authorizeToCallback, authorizeUrl, browserGet, browserPost, consent, pkce, REDIRECT, registerClient, signUp, startAuthorize, tokenRequest, userinfo, type Browser, serverWithClient, type RelyingParty,
} from "./helpers.ts";

let server: TestServer;
let rp: RelyingParty;
beforeAll(async () => ({ server, rp } = await serverWithClient()));
afterAll(() => server.close());

function request(p = pkce(), extra: Record<string, string> = {}) {
  return authorizeUrl(server, {
    response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid email offline_access",
    state: "st4te", nonce: "n0nce", code_challenge: p.challenge, code_challenge_method: "S256", ...extra,
  });
}

async function codeFor(browser: Browser, p = pkce(), extra: Record<string, string> = {}) {
  const callback = await authorizeToCallback(server, browser, request(p, extra));
  expect(callback.searchParams.get("error")).toBeNull();
  return { code: callback.searchParams.get("code")!, verifier: p.verifier };
}

const exchange = (code: string, verifier: string, redirectUri = REDIRECT) =>
  tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirectUri }, rp);

describe("authorization codes", () => {
  it("work once; a replayed code is refused and revokes every token issued from it", async () => {
    const browser = await signUp(server);
    const { code, verifier } = await codeFor(browser);
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    expect((await userinfo(server, first.body.access_token)).status).toBe(200);
    const replay = await exchange(code, verifier);
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe("invalid_grant");
    const after = await userinfo(server, first.body.access_token);
    expect(after.status).toBe(401);
    expect(after.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: first.body.refresh_token }, rp)).body.error).toBe("invalid_grant");
  });

  it("expire after 60 seconds", async () => {
    const { code, verifier } = await codeFor(await signUp(server));
    server.clock.advance(61 * SECOND);
    expect((await exchange(code, verifier)).body.error).toBe("invalid_grant");
  });

  it("are bound to the redirect URI and the PKCE verifier", async () => {
    const browser = await signUp(server);
    const a = await codeFor(browser);
    expect((await exchange(a.code, a.verifier, "https://rp.example.test/other")).body.error).toBe("invalid_grant");
    const b = await codeFor(browser);
    expect((await exchange(b.code, pkce().verifier)).body.error).toBe("invalid_grant");
    const c = await codeFor(browser);
    const missing = await tokenRequest(server, { grant_type: "authorization_code", code: c.code, redirect_uri: REDIRECT }, rp);
    expect(missing.body.error).toBe("invalid_grant");
  });

  it("are bound to the client: another client's credentials get invalid_grant", async () => {
    const other = await registerClient(server);
    const { code, verifier } = await codeFor(await signUp(server));
    const res = await tokenRequest(server, { grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: REDIRECT }, other);
    expect(res.body.error).toBe("invalid_grant");
  });
});

describe("the authorization request", () => {
  it("refuses PKCE plain and a missing method or challenge, back at the client with state and iss", async () => {
    const browser = await signUp(server);
    for (const extra of [{ code_challenge_method: "plain" }, { code_challenge_method: "" }, { code_challenge: "" }]) {
      const params = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== ""));
      const url = new URL(request(pkce(), params));
      for (const [k, v] of Object.entries(extra)) if (v === "") url.searchParams.delete(k);
      const next = await startAuthorize(server, browser, url.toString());
      expect(`${next.origin}${next.pathname}`).toBe(REDIRECT);
      expect(next.searchParams.get("error")).toBe("invalid_request");
      expect(next.searchParams.get("state")).toBe("st4te");
      expect(next.searchParams.get("iss")).toBe(server.auth);
    }
  });

  it("shows, never redirects, an unregistered redirect URI (no prefix, no other path, no added query)", async () => {
    const browser = await signUp(server);
    for (const uri of [`${REDIRECT}/../evil`, `${REDIRECT}x`, `${REDIRECT}?a=1`, "https://evil.example/callback", "https://rp.example.test/Callback"]) {
      const res = await browserGet(browser, request(pkce(), { redirect_uri: uri }));
      if (res.status === 302) expect(res.headers.get("location")!.startsWith(`${server.auth}/error`), uri).toBe(true);
      else expect(res.status, uri).toBe(400);
    }
    const api = await fetch(request(pkce(), { redirect_uri: "https://evil.example/cb" }), { redirect: "manual", headers: { accept: "application/json" } });
    expect(api.status).toBe(400);
    expect(await api.json()).toMatchObject({ error: "invalid_request" });
  });

  it("id_token_hint: another user's session is not the one asked for (login_required with prompt=none); a forged hint is refused", async () => {
    const alice = await signUp(server);
    const { code, verifier } = await codeFor(alice);
    const idToken = (await exchange(code, verifier)).body.id_token as string;
    const bob = await signUp(server);
    await codeFor(bob); // Bob has consented too: only the hint stands between
    const asBob = await startAuthorize(server, bob, request(pkce(), { prompt: "none", id_token_hint: idToken }));
    expect(asBob.searchParams.get("error")).toBe("login_required");
    const asAlice = await startAuthorize(server, alice, request(pkce(), { prompt: "none", id_token_hint: idToken }));
    expect(asAlice.searchParams.get("code")).toEqual(expect.any(String));
    const [h, p] = idToken.split(".");
    const forged = await startAuthorize(server, alice, request(pkce(), { id_token_hint: `${h}.${p}.AAAA` }));
    expect(forged.searchParams.get("error")).toBe("invalid_request");
  });

  it("prompt=none without a session answers login_required at the client", async () => {
    const res = await fetch(request(pkce(), { prompt: "none" }), { redirect: "manual" });
    const next = new URL(res.headers.get("location")!);
    expect(next.searchParams.get("error")).toBe("login_required");
    expect(next.searchParams.get("iss")).toBe(server.auth);
  });

  it("never auto-approves a client the user has not consented to; prompt=none then says consent_required", async () => {
    const browser = await signUp(server);
    const next = await startAuthorize(server, browser, request(pkce(), { prompt: "none" }));
    expect(next.searchParams.get("error")).toBe("consent_required");
    const page = await startAuthorize(server, browser, request());
    expect(page.pathname).toBe("/consent");
  });

  it("sends a signed-out browser to the sign-in page, and back to the client after signing in", async () => {
    const browser = await signUp(server);
    const anonymous = { ...browser, cookie: "" };
    const signIn = await startAuthorize(server, anonymous, request());
    expect(signIn.pathname).toBe("/sign-in");
    const cont = await browserPost(browser, `${server.auth}/oauth2/continue`, { oauth_query: signIn.search.slice(1), postLogin: true });
    expect(new URL(cont.body.url).pathname).toBe("/consent");
    const tampered = signIn.search.slice(1).replace("st4te", "other");
    expect((await browserPost(browser, `${server.auth}/oauth2/continue`, { oauth_query: tampered })).body.code).toBe("INVALID_OAUTH_QUERY");
  });
});

describe("consent", () => {
  it("is bound to the session the request was shown to: another user's browser cannot answer it", async () => {
    const victim = await signUp(server);
    const attacker = await signUp(server);
    const page = await startAuthorize(server, attacker, request());
    const res = await browserPost(victim, `${server.auth}/oauth2/consent`, { accept: true, oauth_query: page.search.slice(1) });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("OAUTH_QUERY_OF_ANOTHER_SESSION");
  });

  it("denied: access_denied at the client", async () => {
    const browser = await signUp(server);
    const page = await startAuthorize(server, browser, request());
    const back = await consent(server, browser, page, false);
    expect(back.searchParams.get("error")).toBe("access_denied");
    expect(back.searchParams.get("state")).toBe("st4te");
  });

  it("an impersonation session can neither consent nor get a code", async () => {
    const admin = await bootstrapAdmin(server);
    const user = await signUp(server);
    const page = await startAuthorize(server, user, request());
    const imp = await post(`${server.auth}/admin/impersonate-user`, { userId: user.userId }, { bearer: admin.token });
    expect(imp.status).toBe(200);
    const token = imp.body.session.token as string;
    const refused = await post(`${server.auth}/oauth2/consent`, { accept: true, oauth_query: page.search.slice(1) }, { bearer: token });
    expect(refused.status).toBe(403);
    expect(refused.body.code).toBe("IMPERSONATION_NOT_ALLOWED");
    // Even for a client the user already allowed.
    await codeFor(user);
    const res = await fetch(request(), { redirect: "manual", headers: { authorization: `Bearer ${token}` } });
    expect(new URL(res.headers.get("location")!).searchParams.get("error")).toBe("access_denied");
  });
});

describe("refresh tokens", () => {
  it("rotate; a reused one revokes the whole grant", async () => {
    const { code, verifier } = await codeFor(await signUp(server));
    const first = (await exchange(code, verifier)).body;
    const second = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: first.refresh_token }, rp);
    expect(second.status).toBe(200);
    const reuse = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: first.refresh_token }, rp);
    expect(reuse.body.error).toBe("invalid_grant");
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: second.body.refresh_token }, rp)).body.error).toBe("invalid_grant");
    expect((await userinfo(server, second.body.access_token)).status).toBe(401);
  });
});

describe("what ends a grant", () => {
  it("signing out ends the access tokens bound to the session; signing out everywhere ends the refresh tokens too", async () => {
    const browser = await signUp(server);
    const { code, verifier } = await codeFor(browser);
    const tokens = (await exchange(code, verifier)).body;
    expect((await browserPost(browser, `${server.auth}/revoke-sessions`, {})).status).toBe(200);
    expect((await userinfo(server, tokens.access_token)).status).toBe(401);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.refresh_token }, rp)).body.error).toBe("invalid_grant");
  });

  it("a ban ends every token and consent; deleting the user takes the rest", async () => {
    const admin = await bootstrapAdmin(server);
    const banned = await signUp(server);
    const a = (await exchange(...Object.values(await codeFor(banned)) as [string, string])).body;
    expect((await post(`${server.auth}/admin/ban-user`, { userId: banned.userId }, { bearer: admin.token })).status).toBe(200);
    expect((await userinfo(server, a.access_token)).status).toBe(401);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: a.refresh_token }, rp)).body.error).toBe("invalid_grant");
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(OauthConsent, { user: banned.userId })).toBe(0);

    const removed = await signUp(server);
    const b = (await exchange(...Object.values(await codeFor(removed)) as [string, string])).body;
    expect((await post(`${server.auth}/admin/remove-user`, { userId: removed.userId }, { bearer: admin.token })).status).toBe(200);
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: b.refresh_token }, rp)).body.error).toBe("invalid_grant");
    expect(await em.count(OauthRefreshToken, { user: removed.userId })).toBe(0);
  });

  it("a code whose session ended before the exchange is refused", async () => {
    const browser = await signUp(server);
    const { code, verifier } = await codeFor(browser);
    expect((await browserPost(browser, `${server.auth}/sign-out`, {})).status).toBe(200);
    expect((await exchange(code, verifier)).body.error).toBe("invalid_grant");
  });
});

describe("discovery", () => {
  it("never takes the issuer from X-Forwarded-* headers, at every location", async () => {
    const spoof = { "x-forwarded-host": "evil.example", "x-forwarded-proto": "https", host: "evil.example" };
    for (const path of ["/api/auth/.well-known/openid-configuration", "/api/auth/.well-known/oauth-authorization-server", "/.well-known/oauth-authorization-server/api/auth", "/.well-known/openid-configuration/api/auth"]) {
      const meta = (await fetch(`${server.url}${path}`, { headers: spoof }).then((r) => r.json())) as Record<string, string>;
      expect(meta.issuer, path).toBe(server.auth);
      expect(JSON.stringify(meta), path).not.toContain("evil.example");
    }
  });
});

describe("client authentication", () => {
  it("stores only the secret's SHA-256 and refuses a wrong secret (any length) with 401 invalid_client", async () => {
    const row = await server.portcullis.app.orm.em.fork().findOneOrFail(OauthClient, { clientId: rp.clientId });
    expect(row.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(row.secretHash).not.toContain(rp.clientSecret!);
    // The same length, one character different (whatever the secret's last character is).
    const oneOff = `${rp.clientSecret!.slice(0, -1)}${rp.clientSecret!.endsWith("A") ? "B" : "A"}`;
    for (const secret of [oneOff, "short", `${rp.clientSecret}x`]) {
      const res = await tokenRequest(server, { grant_type: "client_credentials" }, { clientId: rp.clientId, clientSecret: secret });
      expect(res.status).toBe(401);
      expect(res.body.error).toBe("invalid_client");
      expect(res.headers.get("www-authenticate")).toMatch(/^Basic/);
    }
    const unknown = await tokenRequest(server, { grant_type: "client_credentials" }, { clientId: "nobody", clientSecret: rp.clientSecret });
    expect(unknown.status).toBe(401);
  });

  it("a public client cannot use client_credentials; a confidential one cannot skip its secret", async () => {
    const pub = await registerClient(server, { authMethod: "none" });
    const res = await tokenRequest(server, { grant_type: "client_credentials", client_id: pub.clientId });
    expect(res.body.error).toBe("invalid_client");
    const noSecret = await tokenRequest(server, { grant_type: "authorization_code", client_id: rp.clientId, code: "x", code_verifier: pkce().verifier, redirect_uri: REDIRECT });
    expect(noSecret.body.error).toBe("invalid_client");
  });
});
