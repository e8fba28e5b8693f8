import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exportJWK, generateKeyPair, SignJWT, type JWTPayload } from "jose";
import { HOUR, MINUTE, SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, type SignedInUser } from "../../harness/admin-helpers.ts";
import { browserFlow, callbackUri, captureLogs, expectError, oidcProviders, startFakeProvider, tokenOf, type FakeProvider } from "../../harness/oauth-helpers.ts";

/**
 * Provider ID tokens never become sessions they were not meant for (docs/security.md): an
 * impersonation session gets no provider tokens (docs/wire-contract.md §6), a sign-in ID token is single
 * use and fresh, and no ID token Portcullis received itself in a code flow signs anyone in.
 */

let oidc: TestOidcProvider;
/** Serves the JWKS of `signer`: ID tokens with any claims a test wants, validly signed. */
let keys: FakeProvider;
let signer: Awaited<ReturnType<typeof generateKeyPair>>["privateKey"];
let server: TestServer;
let admin: SignedInUser;
const logs = captureLogs();

const SELF_CLIENT = "self-signed-client";

let n = 0;
function account() {
  n += 1;
  const sub = `sid-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: `${sub}@example.test`, email_verified: true, name: `Id ${n}` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "google"].map(callbackUri) });
  const pair = await generateKeyPair("RS256");
  signer = pair.privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: "self", alg: "RS256", use: "sig" };
  keys = await startFakeProvider(() => ({ json: { keys: [jwk] } }));
  const { oidc: generic, google } = oidcProviders(oidc);
  server = await startTestServer(
    {
      providers: {
        google,
        oidc: generic,
        self: {
          ...generic,
          clientId: SELF_CLIENT,
          issuer: keys.url,
          requireIssuerParameter: false,
          jwksUrl: `${keys.url}/jwks`,
        },
      },
    },
    { logger: logs.logger },
  );
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await Promise.all([oidc?.close(), keys?.close()]);
});

const nowSec = () => Math.floor(server.clock.now().getTime() / 1000);
const refusals = () => logs.entries().filter((e) => e.msg === "id token refused").map((e) => e.reason as string);
const signInWith = (provider: string, token: string): Promise<Reply> => post(`${server.auth}/sign-in/social`, { provider, idToken: { token } });
const digest = (token: string) => createHash("sha256").update(token).digest("hex");

async function count(sql: string, params: unknown[]): Promise<number> {
  const rows = await server.portcullis.app.orm.em.fork().getConnection().execute(sql, params);
  return Number(Object.values(rows[0] as Record<string, unknown>)[0]);
}
const sessionsOf = (email: string) => count("select count(*) as n from sessions s join users u on u.id = s.user_id where u.email = ?", [email]);

/** An ID token of the `self` provider with exactly these claims (iss, aud, sub, email filled in). */
function selfSigned(claims: JWTPayload & { sub: string }): Promise<string> {
  return new SignJWT({ iss: keys.url, aud: SELF_CLIENT, email: `${claims.sub}@example.test`, email_verified: true, ...claims })
    .setProtectedHeader({ alg: "RS256", kid: "self" })
    .sign(signer);
}

/** A user signed in through google's code flow: their session cookie and bearer token. */
async function googleUser() {
  const acct = account();
  const { cookie } = await browserFlow(server, oidc, "google", acct.sub);
  expect(cookie).not.toBeNull();
  return { acct, cookie: cookie!, token: tokenOf(cookie!) };
}

describe(`an impersonation session gets no provider tokens (${testDialect})`, () => {
  it("get-access-token and refresh-token: 403 IMPERSONATION_NOT_ALLOWED over REST and tRPC; the user's own session still gets them", async () => {
    const user = await googleUser();
    const userId = (await get(`${server.auth}/get-session`, { bearer: user.token })).body.user.id;
    const start = await adminPost(server, "impersonate-user", { userId }, admin.token);
    expect(start.status, start.text).toBe(200);
    const imp = start.headers.get("set-auth-token")!;

    for (const path of ["get-access-token", "refresh-token"]) {
      expectError(await post(`${server.auth}/${path}`, { providerId: "google" }, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
      // Refused before the input is read.
      expectError(await post(`${server.auth}/${path}`, {}, { bearer: imp }), 403, "IMPERSONATION_NOT_ALLOWED");
    }
    for (const procedure of ["getAccessToken", "refreshToken"]) {
      const res = await post(`${server.url}/api/trpc/${procedure}`, { providerId: "google" }, { bearer: imp });
      expect(res.status, res.text).toBe(403);
      expect(res.body.error.data.authCode).toBe("IMPERSONATION_NOT_ALLOWED");
    }
    // Reading as the user stays allowed.
    expect((await get(`${server.auth}/list-accounts`, { bearer: imp })).status).toBe(200);
    expect((await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: user.token })).status).toBe(200);
  });
});

describe(`an ID token Portcullis received in a code flow never signs in (${testDialect})`, () => {
  it("the id_token of the callback (as get-access-token answers it) and of a refresh: 401 INVALID_TOKEN, no session", async () => {
    const user = await googleUser();
    const stored = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: user.token });
    expect(stored.status, stored.text).toBe(200);
    const before = refusals().length;
    const sessions = await sessionsOf(user.acct.email);
    expectError(await signInWith("google", stored.body.idToken), 401, "INVALID_TOKEN");

    const refreshed = await post(`${server.auth}/refresh-token`, { providerId: "google" }, { bearer: user.token });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body.idToken).toMatch(/^ey/);
    expect(refreshed.body.idToken).not.toBe(stored.body.idToken);
    expectError(await signInWith("google", refreshed.body.idToken), 401, "INVALID_TOKEN");

    expect(await sessionsOf(user.acct.email)).toBe(sessions);
    expect(refusals().slice(before)).toEqual(["ID_TOKEN_REPLAYED", "ID_TOKEN_REPLAYED"]);
  });

  it("a stored id_token the ledger never saw (imported from better-auth, or stored by an earlier version) is recorded as get-access-token hands it out", async () => {
    const user = await googleUser();
    // As after `portcullis import better-auth` of a fresh sign-in, or an upgrade: the account holds
    // a sealed id_token, and nothing in the ledger names it.
    await server.portcullis.app.orm.em.fork().getConnection().execute("delete from verifications where purpose = ?", ["id-token-seen"]);
    const stored = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: user.token });
    expect(stored.status, stored.text).toBe(200);
    expect(await count("select count(*) as n from verifications where identifier = ?", [digest(stored.body.idToken)])).toBe(1);
    const sessions = await sessionsOf(user.acct.email);
    const before = refusals().length;
    expectError(await signInWith("google", stored.body.idToken), 401, "INVALID_TOKEN");
    expect(refusals().slice(before)).toEqual(["ID_TOKEN_REPLAYED"]);
    expect(await sessionsOf(user.acct.email)).toBe(sessions);
    // Asked again: the same token, still one row.
    const again = await post(`${server.auth}/get-access-token`, { providerId: "google" }, { bearer: user.token });
    expect(again.body.idToken).toBe(stored.body.idToken);
    expect(await count("select count(*) as n from verifications where identifier = ?", [digest(stored.body.idToken)])).toBe(1);
  });
});

describe(`a sign-in ID token is single use (${testDialect})`, () => {
  it("the second use of a token that signed in: 401 INVALID_TOKEN; the log names the reason, never the token", async () => {
    const acct = account();
    const { idToken } = await oidc.nativeTokens(oidc.postClient, acct.sub);
    const first = await signInWith("google", idToken);
    expect(first.status, first.text).toBe(200);
    const before = refusals().length;
    expectError(await signInWith("google", idToken), 401, "INVALID_TOKEN");
    expect(refusals().slice(before)).toEqual(["ID_TOKEN_REPLAYED"]);
    expect(await sessionsOf(acct.email)).toBe(1);
    expect(logs.lines.join("\n")).not.toContain(idToken);
  });

  it("two sign-ins racing with one token: exactly one session", async () => {
    for (let round = 0; round < 3; round++) {
      const acct = account();
      const { idToken } = await oidc.nativeTokens(oidc.postClient, acct.sub);
      const answers = await Promise.all([signInWith("google", idToken), signInWith("google", idToken), signInWith("google", idToken)]);
      expect(answers.map((a) => a.status).sort(), answers.map((a) => a.text).join("\n")).toEqual([200, 401, 401]);
      for (const refused of answers.filter((a) => a.status === 401)) expectError(refused, 401, "INVALID_TOKEN");
      expect(await sessionsOf(acct.email)).toBe(1);
    }
  });

  it("only the digest is kept, until the token expires; then the sweeper removes it", async () => {
    const acct = account();
    const idToken = await selfSigned({ sub: acct.sub, iat: nowSec(), exp: nowSec() + HOUR / SECOND });
    expect((await signInWith("self", idToken)).status).toBe(200);
    const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select * from verifications where identifier = ?", [digest(idToken)]);
    expect(rows).toHaveLength(1);
    expect(JSON.stringify(rows)).not.toContain(idToken);

    const realNow = server.clock.now();
    try {
      await server.portcullis.sweeper.sweepOnce();
      expect(await count("select count(*) as n from verifications where identifier = ?", [digest(idToken)])).toBe(1);
      server.clock.advance(HOUR + MINUTE);
      await server.portcullis.sweeper.sweepOnce();
      expect(await count("select count(*) as n from verifications where identifier = ?", [digest(idToken)])).toBe(0);
    } finally {
      server.clock.set(realNow);
    }
  });
});

describe(`a sign-in ID token must be fresh (${testDialect})`, () => {
  it("issued more than 10 minutes ago (and a minute of clock skew): 401 INVALID_TOKEN; 9 minutes is still fine", async () => {
    const realNow = server.clock.now();
    // The provider stamps iat by the real clock: start from it.
    server.clock.set(new Date());
    try {
      const stale = account();
      const staleToken = (await oidc.nativeTokens(oidc.postClient, stale.sub)).idToken;
      const fresh = account();
      const freshToken = (await oidc.nativeTokens(oidc.postClient, fresh.sub)).idToken;
      server.clock.advance(9 * MINUTE);
      expect((await signInWith("google", freshToken)).status).toBe(200);
      server.clock.advance(3 * MINUTE);
      const before = refusals().length;
      expectError(await signInWith("google", staleToken), 401, "INVALID_TOKEN");
      expect(refusals().slice(before)).toEqual(["ID_TOKEN_TOO_OLD"]);
      expect(await sessionsOf(stale.email)).toBe(0);
    } finally {
      server.clock.set(realNow);
    }
  });

  it("iat in the future, exp more than 24 h ahead, no iat, no exp: 401 INVALID_TOKEN, each for its reason", async () => {
    const now = nowSec();
    const cases: [string, (sub: string) => Promise<string>][] = [
      ["ID_TOKEN_ISSUED_IN_FUTURE", (sub) => selfSigned({ sub, iat: now + 2 * 60, exp: now + 3600 })],
      ["ID_TOKEN_EXPIRES_TOO_LATE", (sub) => selfSigned({ sub, iat: now, exp: now + 25 * 3600 })],
      ["ID_TOKEN_CLAIM_MISSING", (sub) => selfSigned({ sub, exp: now + 3600 })],
      ["ID_TOKEN_CLAIM_MISSING", (sub) => selfSigned({ sub, iat: now })],
    ];
    for (const [reason, make] of cases) {
      const sub = `self-${reason}-${(n += 1)}`;
      const before = refusals().length;
      expectError(await signInWith("self", await make(sub)), 401, "INVALID_TOKEN");
      expect(refusals().slice(before), reason).toEqual([reason]);
      expect(await count("select count(*) as n from users where email = ?", [`${sub}@example.test`])).toBe(0);
    }
    // The same keys and claims within the bounds sign in (a small clock skew included).
    const sub = `self-ok-${(n += 1)}`;
    const ok = await signInWith("self", await selfSigned({ sub, iat: now + 30, exp: now + 24 * 3600 }));
    expect(ok.status, ok.text).toBe(200);
  });

  it("a refused token is not used up: the same token with the right nonce still signs in", async () => {
    const acct = account();
    const { idToken } = await oidc.nativeTokens(oidc.postClient, acct.sub, { nonce: "right-nonce" });
    expectError(await post(`${server.auth}/sign-in/social`, { provider: "google", idToken: { token: idToken, nonce: "wrong-nonce" } }), 401, "INVALID_TOKEN");
    const res = await post(`${server.auth}/sign-in/social`, { provider: "google", idToken: { token: idToken, nonce: "right-nonce" } });
    expect(res.status, res.text).toBe(200);
  });
});
