/**
 * `private_key_jwt` with a `jwks_uri` (docs/oidc-provider.md "Client authentication"), over real
 * HTTP: a loopback JWKS server (so `oidcProvider.registration.allowPrivateUris` on) serves the
 * client's keys, cached and refetched on a rotation; bad answers (oversize, not JSON, a redirect,
 * an error, too slow) are invalid_client, never 500. With the default config the SSRF guard
 * refuses private and loopback URIs at registration and never connects to one at fetch time.
 */
import { randomUUID } from "node:crypto";
import { lookup } from "node:dns/promises";
import { createServer, type Server, type ServerResponse } from "node:http";
import { hostname } from "node:os";
import { exportJWK, generateKeyPair, SignJWT } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { isPublicAddress } from "../../../src/http/guarded-fetch.ts";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { post, request } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { REDIRECT, registerClient } from "./helpers.ts";

type PrivateKey = Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
interface Key { kid: string; privateKey: PrivateKey; jwk: Record<string, unknown> }
const TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
const INITIAL_TOKEN = "initial-access-token-0123456789";

async function newKey(kid: string): Promise<Key> {
  const pair = await generateKeyPair("ES256");
  return { kid, privateKey: pair.privateKey, jwk: { ...(await exportJWK(pair.publicKey)), kid, alg: "ES256", use: "sig" } };
}

/** The relying party's JWKS server: what it serves per path, and every path it was asked for. */
const jwks = { url: "", hits: [] as string[], keys: [] as Record<string, unknown>[], server: null as Server | null };
function answer(res: ServerResponse, path: string) {
  const json = (body: unknown, status = 200) => res.writeHead(status, { "content-type": "application/json" }).end(JSON.stringify(body));
  if (path === "/jwks") return json({ keys: jwks.keys });
  if (path === "/big") return json({ keys: jwks.keys, padding: "x".repeat(100 * 1024) });
  if (path === "/html") return res.writeHead(200, { "content-type": "text/html" }).end("<html><body>not a key set</body></html>");
  if (path === "/empty") return json({ keys: [] });
  if (path === "/redirect") return res.writeHead(302, { location: "/jwks-target" }).end();
  if (path === "/error") return json({ error: "server_error" }, 500);
  if (path === "/slow") return; // never answers
  return json({ keys: jwks.keys });
}

let open: TestServer;
let closed: TestServer;
let k1: Key;
let k2: Key;

beforeAll(async () => {
  [k1, k2] = await Promise.all([newKey("k1"), newKey("k2")]);
  jwks.server = createServer((req, res) => {
    jwks.hits.push(req.url!);
    answer(res, req.url!);
  });
  await new Promise<void>((resolve) => jwks.server!.listen(0, "127.0.0.1", resolve));
  jwks.url = `http://127.0.0.1:${(jwks.server.address() as { port: number }).port}`;
  open = await startTestServer({ oidcProvider: { registration: { allowPrivateUris: true, initialAccessToken: INITIAL_TOKEN } } }, { ownOrigin: true });
  closed = await startTestServer({}, { ownOrigin: true });
});
afterAll(async () => {
  jwks.server?.closeAllConnections();
  await new Promise((resolve) => jwks.server?.close(resolve));
  await open?.close();
  await closed?.close();
});

const hitsOf = (path: string) => jwks.hits.filter((h) => h === path).length;

/** RFC 7591 registration: with the initial access token on `open` (so client_credentials), openly on `closed`. */
async function register(server: TestServer, metadata: Record<string, unknown>) {
  const trusted = server === open;
  const grants = trusted ? ["client_credentials"] : ["authorization_code"];
  const body = { redirect_uris: [REDIRECT], grant_types: grants, token_endpoint_auth_method: "private_key_jwt", ...metadata };
  return post(`${server.auth}/oauth2/register`, body, trusted ? { bearer: INITIAL_TOKEN } : {});
}

async function registeredWithUri(path: string): Promise<string> {
  const res = await register(open, { jwks_uri: `${jwks.url}${path}` });
  expect(res.status, res.text).toBe(201);
  return res.body.client_id as string;
}

async function tokenWith(server: TestServer, clientId: string, key: Key) {
  const now = Math.floor(server.clock.now().getTime() / 1000);
  const claims = { iss: clientId, sub: clientId, aud: `${server.auth}/oauth2/token`, jti: randomUUID(), iat: now, exp: now + 60 };
  const assertion = await new SignJWT(claims).setProtectedHeader({ alg: "ES256", kid: key.kid }).sign(key.privateKey);
  return request("POST", `${server.auth}/oauth2/token`, {
    headers: { "content-type": "application/x-www-form-urlencoded" },
    raw: new URLSearchParams({ grant_type: "client_credentials", client_assertion_type: TYPE, client_assertion: assertion }).toString(),
  });
}

function expectRefused(res: { status: number; text: string; body: { error?: string } }) {
  expect(res.status, res.text).toBe(401);
  expect(res.body.error).toBe("invalid_client");
}

describe("jwks_uri (allowPrivateUris on)", () => {
  it("registers (RFC 7591, no secret) and authenticates at the token endpoint with the fetched keys, cached", async () => {
    jwks.keys = [k1.jwk];
    const res = await register(open, { jwks_uri: `${jwks.url}/jwks` });
    expect(res.status, res.text).toBe(201);
    expect(res.body.jwks_uri).toBe(`${jwks.url}/jwks`);
    expect(res.body.jwks).toBeUndefined();
    expect(res.body.client_secret).toBeUndefined();
    const before = hitsOf("/jwks");
    const first = await tokenWith(open, res.body.client_id, k1);
    expect(first.status, first.text).toBe(200);
    expect(first.body.access_token).toEqual(expect.any(String));
    expect((await tokenWith(open, res.body.client_id, k1)).status).toBe(200);
    expect(hitsOf("/jwks") - before).toBe(1);
  });

  it("picks up a rotated key with a new kid (refetching at most once a minute), and refetches after 5 minutes", async () => {
    jwks.keys = [k1.jwk];
    const clientId = await registeredWithUri("/jwks");
    expect((await tokenWith(open, clientId, k1)).status).toBe(200);
    const fetched = hitsOf("/jwks");
    jwks.keys = [k2.jwk];
    // Fetched just now: an unknown kid does not refetch yet.
    expectRefused(await tokenWith(open, clientId, k2));
    expect(hitsOf("/jwks")).toBe(fetched);
    open.clock.advance(61 * SECOND);
    const rotated = await tokenWith(open, clientId, k2);
    expect(rotated.status, rotated.text).toBe(200);
    expect(hitsOf("/jwks")).toBe(fetched + 1);
    // The old key is gone from the set the client publishes.
    expectRefused(await tokenWith(open, clientId, k1));
    expect(hitsOf("/jwks")).toBe(fetched + 1);
    open.clock.advance(5 * MINUTE);
    expect((await tokenWith(open, clientId, k2)).status).toBe(200);
    expect(hitsOf("/jwks")).toBe(fetched + 2);
  });

  it("an oversize, non-JSON, empty, redirected or failing key set is invalid_client, never 500 (no redirect followed)", async () => {
    jwks.keys = [k1.jwk];
    for (const path of ["/big", "/html", "/empty", "/redirect", "/error"]) {
      const clientId = await registeredWithUri(path);
      const res = await tokenWith(open, clientId, k1);
      expect(res.status, `${path}: ${res.text}`).toBe(401);
      expect(res.body.error).toBe("invalid_client");
      expect(hitsOf(path)).toBeGreaterThan(0);
    }
    expect(hitsOf("/jwks-target")).toBe(0);
  });

  it("a JWKS server that never answers is invalid_client after the 5 s deadline", async () => {
    const clientId = await registeredWithUri("/slow");
    const started = Date.now();
    expectRefused(await tokenWith(open, clientId, k1));
    expect(Date.now() - started).toBeLessThan(9_000);
  }, 20_000);

  it("refuses jwks with jwks_uri, jwks_uri for another method, and a jwks_uri that is no URL (400 invalid_client_metadata)", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ jwks: { keys: [k1.jwk] }, jwks_uri: `${jwks.url}/jwks` }, "jwks and jwks_uri cannot both be present"],
      [{ token_endpoint_auth_method: "client_secret_basic", jwks_uri: `${jwks.url}/jwks` }, "jwks_uri is only used by private_key_jwt"],
      [{ jwks_uri: "not a url" }, "jwks_uri must be an absolute URL"],
      [{ jwks_uri: "ftp://127.0.0.1/jwks" }, "jwks_uri must be an https URL"],
      [{ jwks_uri: `http://user:pw@127.0.0.1/jwks` }, "jwks_uri must not carry credentials"],
    ];
    for (const [extra, description] of cases) {
      const res = await register(open, extra);
      expect(res.status, JSON.stringify(extra)).toBe(400);
      expect(res.body).toMatchObject({ error: "invalid_client_metadata", error_description: description });
    }
  });

  it("create-client and update-client take jwks_uri; new keys replace the old ones whichever way they were given", async () => {
    const token = (await post(`${open.auth}/sign-up/email`, { name: "Owner", email: `owner.${randomUUID()}@example.test`, password: "password123" })).body.token as string;
    const call = (path: string, body: unknown) => post(`${open.auth}${path}`, body, { bearer: token });
    const created = await call("/oauth2/create-client", { redirect_uris: [REDIRECT], token_endpoint_auth_method: "private_key_jwt", jwks_uri: `${jwks.url}/jwks` });
    expect(created.status, created.text).toBe(200);
    expect(created.body.jwks_uri).toBe(`${jwks.url}/jwks`);
    const id = created.body.client_id as string;
    const inline = await call("/oauth2/update-client", { client_id: id, update: { jwks: { keys: [k1.jwk] } } });
    expect(inline.status, inline.text).toBe(200);
    expect(inline.body.jwks_uri).toBeUndefined();
    expect(inline.body.jwks.keys[0].kid).toBe("k1");
    const back = await call("/oauth2/update-client", { client_id: id, update: { jwks_uri: `${jwks.url}/jwks` } });
    expect(back.body.jwks_uri).toBe(`${jwks.url}/jwks`);
    expect(back.body.jwks).toBeUndefined();
    const both = await call("/oauth2/update-client", { client_id: id, update: { jwks: { keys: [k1.jwk] }, jwks_uri: `${jwks.url}/jwks` } });
    expect(both.status).toBe(400);
    expect(both.body.error).toBe("invalid_client_metadata");
    const secretBased = await call("/oauth2/update-client", { client_id: id, update: { token_endpoint_auth_method: "client_secret_basic" } });
    expect(secretBased.status, secretBased.text).toBe(200);
    expect(secretBased.body.jwks_uri).toBeUndefined();
  });
});

describe("the SSRF guard (default config)", () => {
  const refusedAtRegistration = ["https://127.0.0.1/jwks", "https://10.0.0.7/jwks", "https://[::1]/jwks", "https://169.254.169.254/latest", "https://100.64.0.1/jwks", "https://[fd00::1]/jwks", "https://[::ffff:127.0.0.1]/jwks", "https://localhost/jwks", "http://rp.example.test/jwks"];

  it.each(refusedAtRegistration)("refuses %s at registration (400 invalid_client_metadata)", async (uri) => {
    const res = await register(closed, { jwks_uri: uri });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error).toBe("invalid_client_metadata");
    expect(res.body.error_description).toMatch(/^jwks_uri must/);
  });

  it("refuses a name that resolves to a loopback address (this machine's own name, where it does)", async (ctx) => {
    const name = hostname();
    const addresses = await lookup(name, { all: true }).catch(() => []);
    if (addresses.length === 0 || addresses.every((a) => isPublicAddress(a.address))) ctx.skip();
    const res = await register(closed, { jwks_uri: `https://${name}/jwks` });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error_description).toBe("jwks_uri must not point at a private or loopback address");
  });

  it("accepts a public https jwks_uri whose name does not resolve yet (checked again at every fetch)", async () => {
    const res = await register(closed, { jwks_uri: "https://rp.example.test/jwks" });
    expect(res.status, res.text).toBe(201);
  });

  it("never connects to a loopback key set at fetch time, even for a client stored with one (401, the server not asked)", async () => {
    jwks.keys = [k1.jwk];
    for (const uri of [`${jwks.url}/guarded`, `https://localhost:${new URL(jwks.url).port}/guarded`, `https://${hostname()}:${new URL(jwks.url).port}/guarded`]) {
      const { clientId } = await registerClient(closed, { authMethod: "private_key_jwt", grantTypes: ["client_credentials"], jwksUri: uri });
      expectRefused(await tokenWith(closed, clientId, k1));
    }
    expect(hitsOf("/guarded")).toBe(0);
  });
});
