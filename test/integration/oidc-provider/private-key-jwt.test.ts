/**
 * `private_key_jwt` client authentication (OIDC Core §9, RFC 7523) at the token, introspection
 * and revocation endpoints, with a real key pair: replay, audience, expiry, a foreign key and
 * the algorithms that must never verify (docs/oidc-provider.md "Client authentication").
 */
import { randomUUID } from "node:crypto";
import { exportJWK, generateKeyPair, SignJWT, UnsecuredJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, request } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { REDIRECT, registerClient } from "./helpers.ts";

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
const TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
let server: TestServer;
let clientId: string;
let privateKey: PrivateKey;
let publicJwk: Record<string, unknown>;

beforeAll(async () => {
  server = await startTestServer({}, { ownOrigin: true });
  const pair = await generateKeyPair("ES256");
  privateKey = pair.privateKey;
  publicJwk = { ...(await exportJWK(pair.publicKey)), kid: "k1", alg: "ES256" };
  ({ clientId } = await registerClient(server, { authMethod: "private_key_jwt", jwks: { keys: [publicJwk] } }));
});
afterAll(async () => {
  await server.close();
});

const nowSec = () => Math.floor(server.clock.now().getTime() / 1000);
const tokenEndpoint = () => `${server.auth}/oauth2/token`;

function assertion(overrides: Record<string, unknown> = {}, key: PrivateKey | Uint8Array = privateKey, alg = "ES256") {
  const claims = { iss: clientId, sub: clientId, aud: tokenEndpoint(), jti: randomUUID(), iat: nowSec(), exp: nowSec() + 60, ...overrides };
  return new SignJWT(claims).setProtectedHeader({ alg, kid: "k1" }).sign(key);
}

const form = (url: string, body: Record<string, string>) =>
  request("POST", url, { headers: { "content-type": "application/x-www-form-urlencoded" }, raw: new URLSearchParams(body).toString() });

const clientCredentials = (jwt: string, extra: Record<string, string> = {}) =>
  form(tokenEndpoint(), { grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: jwt, ...extra });

function expectRefused(res: { status: number; body: { error?: string } }) {
  expect(res.status).toBe(401);
  expect(res.body.error).toBe("invalid_client");
}

describe("private_key_jwt", () => {
  it("authenticates at the token endpoint, with the token endpoint or the issuer as audience", async () => {
    const res = await clientCredentials(await assertion());
    expect(res.status, res.text).toBe(200);
    expect(res.body.access_token).toEqual(expect.any(String));
    const issuer = (await get(`${server.auth}/.well-known/openid-configuration`)).body.issuer as string;
    expect((await clientCredentials(await assertion({ aud: issuer }))).status).toBe(200);
  });

  it("refuses a replayed assertion (jti used once)", async () => {
    const jwt = await assertion();
    expect((await clientCredentials(jwt)).status).toBe(200);
    expectRefused(await clientCredentials(jwt));
  });

  it("refuses another audience, an expired assertion, one valid too long, and one without jti", async () => {
    expectRefused(await clientCredentials(await assertion({ aud: "https://other.example.test/token" })));
    expectRefused(await clientCredentials(await assertion({ iat: nowSec() - 600, exp: nowSec() - 120 })));
    expectRefused(await clientCredentials(await assertion({ exp: nowSec() + 3600 })));
    expectRefused(await clientCredentials(await assertion({ jti: undefined })));
  });

  it("refuses a key the client did not register, iss other than sub, and a client_id other than the subject", async () => {
    const foreign = await generateKeyPair("ES256");
    expectRefused(await clientCredentials(await assertion({}, foreign.privateKey)));
    expectRefused(await clientCredentials(await assertion({ iss: "someone-else" })));
    expectRefused(await clientCredentials(await assertion(), { client_id: "someone-else" }));
  });

  it("never verifies alg none or HS256 (even keyed with the public key's bytes)", async () => {
    const claims = { iss: clientId, sub: clientId, aud: tokenEndpoint(), jti: randomUUID(), exp: nowSec() + 60 };
    expectRefused(await clientCredentials(new UnsecuredJWT(claims).encode()));
    const hmacKey = new TextEncoder().encode(JSON.stringify(publicJwk));
    expectRefused(await clientCredentials(await assertion({}, hmacKey, "HS256")));
  });

  it("a secret cannot authenticate it, and two methods at once are refused", async () => {
    const basic = `Basic ${Buffer.from(`${clientId}:anything`).toString("base64")}`;
    const secret = await request("POST", tokenEndpoint(), { headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic }, raw: "grant_type=client_credentials" });
    expect(secret.status).toBe(401);
    const both = await request("POST", tokenEndpoint(), {
      headers: { "content-type": "application/x-www-form-urlencoded", authorization: basic },
      raw: new URLSearchParams({ grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: await assertion() }).toString(),
    });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe("invalid_request");
  });

  it("authenticates introspection and revocation too", async () => {
    const token = (await clientCredentials(await assertion())).body.access_token as string;
    const introspected = await form(`${server.auth}/oauth2/introspect`, { token, client_assertion_type: TYPE, client_assertion: await assertion() });
    expect(introspected.status, introspected.text).toBe(200);
    expect(introspected.body.active).toBe(true);
    const revoked = await form(`${server.auth}/oauth2/revoke`, { token, client_assertion_type: TYPE, client_assertion: await assertion() });
    expect(revoked.status, revoked.text).toBe(200);
    const after = await form(`${server.auth}/oauth2/introspect`, { token, client_assertion_type: TYPE, client_assertion: await assertion() });
    expect(after.body.active).toBe(false);
  });

  it("registers through RFC 7591 with jwks (no secret issued); refuses it without keys, with private keys, or with both jwks and jwks_uri", async () => {
    const ok = await post(`${server.auth}/oauth2/register`, { redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [publicJwk] } });
    expect(ok.status, ok.text).toBe(201);
    expect(ok.body.client_secret).toBeUndefined();
    expect(ok.body.token_endpoint_auth_method).toBe("private_key_jwt");
    expect(ok.body.jwks.keys[0].x).toBe(publicJwk.x);
    const pair = await generateKeyPair("ES256", { extractable: true });
    const cases = [
      { token_endpoint_auth_method: "private_key_jwt" },
      { token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [await exportJWK(pair.privateKey)] } },
      { token_endpoint_auth_method: "private_key_jwt", jwks: { keys: [publicJwk] }, jwks_uri: "https://rp.example.test/jwks" },
    ];
    for (const extra of cases) {
      const res = await post(`${server.auth}/oauth2/register`, { redirect_uris: [REDIRECT], ...extra });
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body.error).toBe("invalid_client_metadata");
    }
  });

  it("discovery lists the method and the signing algorithms (asymmetric only)", async () => {
    const meta = (await get(`${server.auth}/.well-known/openid-configuration`)).body;
    expect(meta.token_endpoint_auth_methods_supported).toContain("private_key_jwt");
    expect(meta.introspection_endpoint_auth_methods_supported).toContain("private_key_jwt");
    expect(meta.token_endpoint_auth_signing_alg_values_supported).toContain("ES256");
    expect(meta.token_endpoint_auth_signing_alg_values_supported).not.toContain("HS256");
    expect(meta.token_endpoint_auth_signing_alg_values_supported).not.toContain("none");
  });
});
