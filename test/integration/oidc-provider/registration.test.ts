/**
 * RFC 7591 dynamic registration (docs/oidc-provider.md "Registration"): open by default, 201,
 * redirect URIs checked, no client_credentials or skip_consent without credentials, closed or
 * gated by an initial access token, rate-limited; openid-client registers and signs in.
 */
import * as oidc from "openid-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OauthClient } from "../../../src/db/entities/index.ts";
import { post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeToCallback, REDIRECT, signUp } from "./helpers.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({}, { ownOrigin: true });
});
afterAll(async () => {
  await server.close();
});

const register = (body: unknown, bearer?: string, target = server) => post(`${target.auth}/oauth2/register`, body, bearer ? { bearer } : {});

describe("POST /oauth2/register", () => {
  it("registers a confidential client with 201 and answers its secret once, stored as a digest", async () => {
    const res = await register({ redirect_uris: [REDIRECT], client_name: "Grafana", scope: "openid email" });
    expect(res.status).toBe(201);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.body).toMatchObject({ client_name: "Grafana", redirect_uris: [REDIRECT], grant_types: ["authorization_code"], token_endpoint_auth_method: "client_secret_basic", client_secret_expires_at: 0, scope: "openid email" });
    const row = await server.portcullis.app.orm.em.fork().findOneOrFail(OauthClient, { clientId: res.body.client_id });
    expect(row.secretHash).not.toBe(res.body.client_secret);
    expect(row.skipConsent).toBe(false);
    expect(res.body.skip_consent).toBeUndefined();
  });

  it("registers a public client (none) without a secret; loopback http and private-use schemes are fine", async () => {
    const res = await register({ redirect_uris: ["http://127.0.0.1:33418/cb", "com.example.app:/cb"], token_endpoint_auth_method: "none" });
    expect(res.status).toBe(201);
    expect(res.body.client_secret).toBeUndefined();
  });

  it("refuses javascript:, data:, fragments, plain http off loopback, and a missing redirect URI", async () => {
    for (const uri of ["javascript:alert(1)", "data:text/html,hi", "https://rp.example.test/cb#x", "http://rp.example.test/cb", "not a url"]) {
      const res = await register({ redirect_uris: [uri] });
      expect(res.status, uri).toBe(400);
      expect(res.body.error, uri).toBe("invalid_redirect_uri");
    }
    expect((await register({})).body.error).toBe("invalid_redirect_uri");
  });

  it("refuses client_credentials and unknown grants without credentials, and skip_consent is never taken", async () => {
    expect((await register({ redirect_uris: [REDIRECT], grant_types: ["authorization_code", "client_credentials"] })).body.error).toBe("invalid_client_metadata");
    expect((await register({ redirect_uris: [REDIRECT], grant_types: ["implicit"] })).body.error).toBe("invalid_client_metadata");
    expect((await register({ redirect_uris: [REDIRECT], scope: "admin" })).body.error).toBe("invalid_scope");
    const res = await register({ redirect_uris: [REDIRECT], skip_consent: true });
    expect(res.status).toBe(201);
    expect(res.body.skip_consent).toBeUndefined();
  });

  it("openid-client registers dynamically and signs a user in with the new client", async () => {
    const config = await oidc.dynamicClientRegistration(new URL(server.auth), { redirect_uris: [REDIRECT], token_endpoint_auth_method: "client_secret_post", scope: "openid email" }, undefined, { execute: [oidc.allowInsecureRequests] });
    const browser = await signUp(server);
    const verifier = oidc.randomPKCECodeVerifier();
    const url = oidc.buildAuthorizationUrl(config, { redirect_uri: REDIRECT, scope: "openid email", code_challenge: await oidc.calculatePKCECodeChallenge(verifier), code_challenge_method: "S256", state: "s" });
    const callback = await authorizeToCallback(server, browser, url.toString());
    const tokens = await oidc.authorizationCodeGrant(config, callback, { pkceCodeVerifier: verifier, expectedState: "s" });
    expect(tokens.claims()?.email).toBe(browser.email);
  });
});

describe("registration settings", () => {
  it("closed: 403 access_denied; with an initial access token: only its bearer registers, and may register client_credentials", async () => {
    const closed = await startTestServer({ oidcProvider: { registration: { open: false } } });
    const gated = await startTestServer({ oidcProvider: { registration: { initialAccessToken: "initial-access-token-0123456789" } } });
    try {
      const refused = await register({ redirect_uris: [REDIRECT] }, undefined, closed);
      expect(refused.status).toBe(403);
      expect(refused.body.error).toBe("access_denied");
      expect((await register({ redirect_uris: [REDIRECT] }, undefined, gated)).status).toBe(401);
      expect((await register({ redirect_uris: [REDIRECT] }, "wrong-token-wrong-token", gated)).body.error).toBe("invalid_token");
      const ok = await register({ redirect_uris: [REDIRECT], grant_types: ["authorization_code", "client_credentials"] }, "initial-access-token-0123456789", gated);
      expect(ok.status).toBe(201);
      const meta = (await fetch(`${closed.auth}/.well-known/openid-configuration`).then((r) => r.json())) as Record<string, unknown>;
      expect(meta.registration_endpoint).toBeUndefined();
    } finally {
      await closed.close();
      await gated.close();
    }
  });

  it("secrets can expire", async () => {
    const expiring = await startTestServer({ oidcProvider: { registration: { secretExpiresInSec: 3600 } } });
    try {
      const res = await register({ redirect_uris: [REDIRECT], grant_types: ["authorization_code"] }, undefined, expiring);
      expect(res.body.client_secret_expires_at).toBe(Math.floor(expiring.clock.now().getTime() / 1000) + 3600);
    } finally {
      await expiring.close();
    }
  });

  it("is rate-limited per address", async () => {
    const limited = await startTestServer({ rateLimit: { enabled: true } });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 7; i++) statuses.push((await register({ redirect_uris: [REDIRECT] }, undefined, limited)).status);
      expect(statuses.slice(0, 5)).toEqual([201, 201, 201, 201, 201]);
      expect(statuses.at(-1)).toBe(429);
    } finally {
      await limited.close();
    }
  });
});
