import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeJwt, exportJWK, generateKeyPair, SignJWT } from "jose";
import { resolveConfig } from "../../../src/config/index.ts";
import type { PortcullisConfig } from "../../../src/index.ts";
import { HOUR } from "../../harness/clock.ts";
import { cookieFrom, get, post, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type OidcClient, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { captureLogs, expectError, oidcProviders, startFakeProvider, type FakeProvider } from "../../harness/oauth-helpers.ts";

/**
 * Sign-in with an ID token (docs/wire-contract.md §9, better-auth's `idToken`): real tokens minted by a
 * real OpenID provider for a "native app", verified against its JWKS; forged, foreign, expired and
 * mismatched ones refused; then the code flow's linking rules (docs/wire-contract.md §5).
 */

let oidc: TestOidcProvider;
/** Another issuer with its own keys, registering the same client ids. */
let rogue: TestOidcProvider;
let fake: FakeProvider;
let server: TestServer;
let admin: SignedInUser;
const logs = captureLogs();

let n = 0;
function account(opts: { verified?: boolean; email?: string } = {}) {
  n += 1;
  const sub = `idt-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: opts.email ?? `${sub}@example.test`, email_verified: opts.verified ?? true, name: `Native ${n}` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  [oidc, rogue] = await Promise.all([startOidcProvider({ redirectUris: [] }), startOidcProvider({ redirectUris: [] })]);
  fake = await startFakeProvider((req) => (req.path === "/down/.well-known/openid-configuration" ? { status: 503, json: {} } : { json: { issuer: "https://elsewhere.example", jwks_uri: `${oidc.discovery.jwks_uri}` } }));
  const { oidc: generic, google } = oidcProviders(oidc);
  server = await startTestServer(
    {
      providers: {
        google,
        // Generic, keys from the discovery document (better-auth's discoveryUrl).
        oidc: { ...generic, issuer: undefined, requireIssuerParameter: false, discoveryUrl: `${oidc.issuer}/.well-known/openid-configuration` },
        // Generic, explicit issuer and JWKS, the operator's own claim mapping.
        mapped: { ...generic, jwksUrl: oidc.discovery.jwks_uri, mapIdTokenClaims: (c) => ({ id: `m-${String(c.sub)}`, email: c.email as string, name: "Mapped", emailVerified: c.email_verified as boolean }) },
        plain: generic,
        down: { ...generic, issuer: undefined, requireIssuerParameter: false, discoveryUrl: `${fake.url}/down/.well-known/openid-configuration` },
        liar: { ...generic, issuer: undefined, requireIssuerParameter: false, discoveryUrl: `${fake.url}/liar/.well-known/openid-configuration` },
      },
    },
    { logger: logs.logger },
  );
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await Promise.all([oidc?.close(), rogue?.close(), fake?.close()]);
});

const refusals = () => logs.entries().filter((e) => e.msg === "id token refused").map((e) => e.reason as string);

function signInWith(provider: string, idToken: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<Reply> {
  return post(`${server.auth}/sign-in/social`, { provider, idToken, ...extra });
}

/** `provider`'s client at the real OpenID provider: google is registered with the post client, the generic ones with basic. */
const clientFor = (provider: string): OidcClient => (provider === "google" ? oidc.postClient : oidc.basicClient);

async function mint(provider: string, sub: string, nonce?: string, at = oidc) {
  const client = clientFor(provider);
  return at.nativeTokens(at === oidc ? client : provider === "google" ? at.postClient : at.basicClient, sub, nonce ? { nonce } : {});
}

function expectSignedIn(res: Reply, email: string) {
  expect(res.status, res.text).toBe(200);
  expect(Object.keys(res.body).sort()).toEqual(["redirect", "token", "user"]);
  expect(res.body).toMatchObject({ redirect: false, token: expect.any(String), user: { email } });
  expect(res.headers.get("set-auth-token")).toBe(res.body.token);
  expect(cookieFrom(res.headers)).toBe(`portcullis.session_token=${res.body.token}`);
}

describe("a valid ID token signs in (never ignored for the redirect flow)", () => {
  it("google: a new user, emailVerified from the token; the same sub signs the same user in again", async () => {
    const alice = account();
    const tokens = await mint("google", alice.sub, "nonce-alice");
    const expiresAt = server.clock.now().getTime() + HOUR;
    const res = await signInWith("google", { token: tokens.idToken, nonce: "nonce-alice", accessToken: tokens.accessToken, expiresAt });
    expectSignedIn(res, alice.email);
    expect(res.body.user).toMatchObject({ name: alice.name, emailVerified: true });
    const session = await get(`${server.auth}/get-session`, { bearer: res.body.token });
    expect(session.body.user.id).toBe(res.body.user.id);
    const stored = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: res.body.token });
    expect(stored.body).toMatchObject({ accessToken: tokens.accessToken, idToken: tokens.idToken });
    expect(Math.abs(Date.parse(stored.body.accessTokenExpiresAt) - expiresAt)).toBeLessThan(1000);

    // Rule 1: no nonce is asked for this time (better-auth compares one only when given).
    const again = await signInWith("google", { token: (await mint("google", alice.sub)).idToken });
    expectSignedIn(again, alice.email);
    expect(again.body.user.id).toBe(res.body.user.id);
    // No access token in the second sign-in: the stored one stays.
    expect((await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: again.body.token })).body.accessToken).toBe(tokens.accessToken);
  });

  it("a generic provider through its discovery document, over tRPC too", async () => {
    const bob = account();
    const res = await post(`${server.url}/api/trpc/signIn.social`, { provider: "oidc", idToken: { token: (await mint("oidc", bob.sub)).idToken } });
    expect(res.status, res.text).toBe(200);
    expect(res.body.result.data).toMatchObject({ redirect: false, user: { email: bob.email } });
    expect(res.headers.get("set-auth-token")).toBe(res.body.result.data.token);
    const accounts = await get(`${server.auth}/list-accounts`, { bearer: res.body.result.data.token });
    expect(accounts.body.map((a: { providerId: string; accountId: string }) => [a.providerId, a.accountId])).toEqual([["oidc", bob.sub]]);
  });

  it("explicit issuer + jwksUrl with mapIdTokenClaims", async () => {
    const carol = account();
    const res = await signInWith("mapped", { token: (await mint("mapped", carol.sub)).idToken });
    expectSignedIn(res, carol.email);
    expect(res.body.user.name).toBe("Mapped");
    const accounts = await get(`${server.auth}/list-accounts`, { bearer: res.body.token });
    expect(accounts.body[0]).toMatchObject({ providerId: "mapped", accountId: `m-${carol.sub}` });
  });
});

describe("provider options", () => {
  it("refuse jwksUrl without an issuer, and mapIdTokenClaims without keys, at start, naming the key", () => {
    const generic = { ...oidcProviders(oidc).oidc, issuer: undefined, requireIssuerParameter: false };
    const refusal = (provider: Record<string, unknown>) => {
      try {
        resolveConfig({ providers: { acme: provider } } as unknown as PortcullisConfig);
        return "accepted";
      } catch (err) {
        return (err as Error).message;
      }
    };
    expect(refusal({ ...generic, jwksUrl: oidc.discovery.jwks_uri })).toMatch(/providers\.acme\.issuer: is required with jwksUrl/);
    expect(refusal({ ...generic, mapIdTokenClaims: () => ({}) })).toMatch(/providers\.acme\.mapIdTokenClaims: needs discoveryUrl/);
    expect(refusal({ ...generic, discoveryUrl: `${oidc.issuer}/.well-known/openid-configuration`, mapIdTokenClaims: () => ({}) })).toBe("accepted");
  });
});

describe("refusals", () => {
  it("400 ID_TOKEN_NOT_SUPPORTED for a provider without ID-token keys; 400 PROVIDER_NOT_FOUND for an unknown one", async () => {
    const dave = account();
    const token = (await mint("plain", dave.sub)).idToken;
    expectError(await signInWith("plain", { token }), 400, "ID_TOKEN_NOT_SUPPORTED");
    expectError(await signInWith("myspace", { token }), 400, "PROVIDER_NOT_FOUND");
    const viaTrpc = await post(`${server.url}/api/trpc/signIn.social`, { provider: "plain", idToken: { token } });
    expect(viaTrpc.status).toBe(400);
    expect(viaTrpc.body.error.data.authCode).toBe("ID_TOKEN_NOT_SUPPORTED");
  });

  it("401 INVALID_TOKEN: another audience, another issuer's keys, a forged signature, alg none, HS256 with the public key, garbage", async () => {
    const eve = account();
    rogue.setAccount(eve); // the same sub and address at a rogue issuer
    const forAnotherClient = (await mint("oidc", eve.sub)).idToken; // aud = the basic client
    const fromRogue = (await mint("google", eve.sub, undefined, rogue)).idToken; // right aud, rogue iss and keys
    const claims = { ...decodeJwt((await mint("google", eve.sub)).idToken) };
    const attacker = await generateKeyPair("RS256");
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", kid: "test-signing-key" }).sign(attacker.privateKey);
    const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
    const none = `${b64({ alg: "none", typ: "JWT" })}.${b64(claims)}.`;
    const publicJwk = ((await (await fetch(oidc.discovery.jwks_uri)).json()) as { keys: object[] }).keys[0];
    const hmac = await new SignJWT(claims).setProtectedHeader({ alg: "HS256", kid: "test-signing-key" }).sign(new TextEncoder().encode(JSON.stringify(publicJwk)));
    const attackerJwk = await exportJWK(attacker.publicKey);
    const embedded = await new SignJWT(claims).setProtectedHeader({ alg: "RS256", jwk: attackerJwk }).sign(attacker.privateKey);
    const before = refusals().length;
    for (const token of [forAnotherClient, fromRogue, forged, none, hmac, embedded, "not-a-jwt", "a.b.c"]) {
      expectError(await signInWith("google", { token }), 401, "INVALID_TOKEN");
    }
    // Each refused for its own reason (jose's codes, in the log only).
    const BAD_SIGNATURE = "ERR_JWS_SIGNATURE_VERIFICATION_FAILED";
    expect(refusals().slice(before)).toEqual([
      "ERR_JWT_CLAIM_VALIDATION_FAILED", BAD_SIGNATURE, BAD_SIGNATURE, "ERR_JOSE_ALG_NOT_ALLOWED", "ERR_JOSE_ALG_NOT_ALLOWED", BAD_SIGNATURE, "ERR_JWS_INVALID", "ERR_JWS_INVALID",
    ]);
    // Nobody was signed up under that address.
    expect((await post(`${server.auth}/sign-up/email`, { name: "Eve", email: eve.email, password: PASSWORD })).status).toBe(200);
  });

  it("401 INVALID_TOKEN for a nonce that does not match, or a nonce the token does not carry", async () => {
    const frank = account();
    const withNonce = (await mint("google", frank.sub, "nonce-one")).idToken;
    expectError(await signInWith("google", { token: withNonce, nonce: "nonce-two" }), 401, "INVALID_TOKEN");
    expectError(await signInWith("google", { token: (await mint("google", frank.sub)).idToken, nonce: "nonce-one" }), 401, "INVALID_TOKEN");
    expectSignedIn(await signInWith("google", { token: withNonce, nonce: "nonce-one" }), frank.email);
  });

  it("401 INVALID_TOKEN once the token has expired (injected clock past its exp)", async () => {
    const gina = account();
    const token = (await mint("google", gina.sub)).idToken;
    const realNow = server.clock.now();
    server.clock.advance(25 * HOUR); // the provider's id tokens live 24 h
    try {
      expectError(await signInWith("google", { token }), 401, "INVALID_TOKEN");
    } finally {
      server.clock.set(realNow);
    }
    expect(refusals().at(-1)).toBe("ERR_JWT_EXPIRED");
    expect(logs.lines.join("\n")).not.toContain(token);
  });

  it("500 OAUTH_PROVIDER_ERROR when the discovery document is down or names another issuer", async () => {
    const hank = account();
    const token = (await mint("oidc", hank.sub)).idToken;
    expectError(await signInWith("down", { token }), 500, "OAUTH_PROVIDER_ERROR");
    expectError(await signInWith("liar", { token }), 500, "OAUTH_PROVIDER_ERROR");
  });

  it("403 INVALID_CALLBACK_URL for an untrusted callbackURL, before the token is looked at", async () => {
    expectError(await signInWith("google", { token: "x" }, { callbackURL: "https://evil.example/" }), 403, "INVALID_CALLBACK_URL");
  });
});

describe("the linking rules of the code flow apply", () => {
  it("403 BANNED_USER for a banned user", async () => {
    const ivan = account();
    const first = await signInWith("google", { token: (await mint("google", ivan.sub)).idToken });
    expect((await adminPost(server, "ban-user", { userId: first.body.user.id }, admin.token)).status).toBe(200);
    expectError(await signInWith("google", { token: (await mint("google", ivan.sub)).idToken }), 403, "BANNED_USER");
  });

  it("409 ACCOUNT_NOT_LINKED for an unverified email that matches a user: nothing linked", async () => {
    const local = await signUp(server);
    const judy = account({ email: local.email, verified: false });
    expectError(await signInWith("google", { token: (await mint("google", judy.sub)).idToken }), 409, "ACCOUNT_NOT_LINKED");
    const accounts = await get(`${server.auth}/list-accounts`, { bearer: local.token });
    expect(accounts.body.map((a: { providerId: string }) => a.providerId)).toEqual(["credential"]);
  });

  it("a verified token for an unverified squatter's address takes the account over (password, sessions gone)", async () => {
    const squatter = await signUp(server);
    const owner = account({ email: squatter.email, verified: true });
    const res = await signInWith("google", { token: (await mint("google", owner.sub)).idToken });
    expectSignedIn(res, squatter.email);
    expect(res.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
    expect((await get(`${server.auth}/get-session`, { bearer: squatter.token })).body).toBeNull();
    expectError(await post(`${server.auth}/sign-in/email`, { email: squatter.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
  });
});
