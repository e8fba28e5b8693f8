import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieFrom, get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import {
  basicCredentials,
  Browser,
  callbackUri,
  captureLogs,
  expectError,
  PUBLIC_URL,
  s256,
  startFakeProvider,
  type FakeProvider,
  type FakeReply,
  type RecordedRequest,
} from "../../harness/oauth-helpers.ts";

/**
 * The github and discord built-ins against local fakes of their endpoints (authorization URL,
 * client authentication, PKCE, user-info mapping), and the failures of any provider: a 500, a
 * redirect, a body without email, a timeout. Each fake checks the PKCE verifier like the real
 * token endpoint (RFC 7636 §4.6).
 */

interface Grant {
  challenge: string;
  redirectUri: string;
  accessToken: string;
}

/** What a fake's authorize endpoint would remember: code → grant. */
function grants() {
  const byCode = new Map<string, Grant>();
  return {
    byCode,
    /** The provider's redirect back, as if the user had approved `authorizeUrl`. */
    approve(authorizeUrl: string, accessToken = `at_${randomBytes(12).toString("hex")}`) {
      const q = new URL(authorizeUrl).searchParams;
      const code = `code_${randomBytes(12).toString("hex")}`;
      byCode.set(code, { challenge: q.get("code_challenge")!, redirectUri: q.get("redirect_uri")!, accessToken });
      return { code, state: q.get("state")!, accessToken };
    },
    /** RFC 6749 §4.1.3 with RFC 7636 §4.6; null when the request is not valid. */
    redeem(req: RecordedRequest): Grant | null {
      const grant = byCode.get(req.form.get("code") ?? "");
      if (!grant || grant.redirectUri !== req.form.get("redirect_uri") || s256(req.form.get("code_verifier") ?? "") !== grant.challenge) return null;
      byCode.delete(req.form.get("code")!);
      return grant;
    },
  };
}

const bearerOf = (req: RecordedRequest) => req.headers.authorization?.replace(/^Bearer /, "") ?? "";

// GitHub ------------------------------------------------------------------------------------

const github = grants();
const githubUsers = new Map<string, { user: Record<string, unknown>; emails: unknown[] | null }>();
let githubFake: FakeProvider;

function githubRoute(req: RecordedRequest): FakeReply {
  if (req.method === "POST" && req.path === "/login/oauth/access_token") {
    if (req.form.get("client_id") !== "gh-client" || req.form.get("client_secret") !== "gh-secret") return { json: { error: "incorrect_client_credentials" } };
    const grant = github.redeem(req);
    // GitHub answers token errors with 200 and an `error` field.
    if (!grant) return { json: { error: "bad_verification_code", error_description: "The code passed is incorrect or expired." } };
    return { json: { access_token: grant.accessToken, token_type: "bearer", scope: "read:user,user:email" } };
  }
  const found = githubUsers.get(bearerOf(req));
  if (!found || !req.headers["user-agent"]) return { status: 401, json: { message: "Bad credentials" } };
  if (req.path === "/user") return { json: found.user };
  if (req.path === "/user/emails") return found.emails ? { json: found.emails } : { status: 403, json: { message: "Resource not accessible" } };
  return { status: 404, json: {} };
}

// Discord -----------------------------------------------------------------------------------

const discord = grants();
const discordUsers = new Map<string, Record<string, unknown>>();
let discordFake: FakeProvider;
let discordRefreshFails = false;

function discordRoute(req: RecordedRequest): FakeReply {
  if (req.method === "POST" && req.path === "/api/oauth2/token") {
    const creds = basicCredentials(req);
    if (!creds || creds[0] !== "dc-client" || creds[1] !== "dc secret/+") return { status: 401, json: { error: "invalid_client" } };
    if (req.form.get("grant_type") === "refresh_token") {
      if (discordRefreshFails) return { status: 500, json: { error: "server_error" } };
      const profile = discordUsers.get(req.form.get("refresh_token")!.replace(/^rt_/, ""));
      if (!profile) return { status: 400, json: { error: "invalid_grant" } };
      const next = `at_${randomBytes(8).toString("hex")}`;
      discordUsers.set(next, profile);
      return { json: { access_token: next, token_type: "Bearer", expires_in: 604800, refresh_token: `rt_${next}`, scope: "identify email" } };
    }
    const grant = discord.redeem(req);
    if (!grant) return { status: 400, json: { error: "invalid_grant" } };
    return { json: { access_token: grant.accessToken, token_type: "Bearer", expires_in: 604800, refresh_token: `rt_${grant.accessToken}`, scope: "identify email" } };
  }
  const profile = discordUsers.get(bearerOf(req));
  if (req.path === "/api/users/@me" && profile) return { json: profile };
  return { status: 401, json: { message: "401: Unauthorized", code: 0 } };
}

// A generic provider whose endpoints misbehave on demand ------------------------------------

const acme = grants();
let acmeFake: FakeProvider;
let acmeToken: (req: RecordedRequest) => FakeReply | "hang";
let acmeUserInfo: () => FakeReply;

let server: TestServer;
const logs = captureLogs();

beforeAll(async () => {
  githubFake = await startFakeProvider(githubRoute);
  discordFake = await startFakeProvider(discordRoute);
  acmeFake = await startFakeProvider(async (req) => {
    if (req.path === "/elsewhere") return { json: { access_token: "stolen", token_type: "bearer" } };
    if (req.path === "/token") {
      const reply = acmeToken(req);
      if (reply === "hang") return new Promise<FakeReply>((resolve) => setTimeout(() => resolve({ json: {} }), 2000));
      return reply;
    }
    return acmeUserInfo();
  });
  server = await startTestServer(
    {
      http: { headersTimeoutMs: 500 },
      providers: {
        github: {
          type: "github",
          clientId: "gh-client",
          clientSecret: "gh-secret",
          authUrl: `${githubFake.url}/login/oauth/authorize`,
          tokenUrl: `${githubFake.url}/login/oauth/access_token`,
          userInfoUrl: `${githubFake.url}/user`,
          emailsUrl: `${githubFake.url}/user/emails`,
        },
        discord: {
          type: "discord",
          clientId: "dc-client",
          clientSecret: "dc secret/+",
          authUrl: `${discordFake.url}/oauth2/authorize`,
          tokenUrl: `${discordFake.url}/api/oauth2/token`,
          userInfoUrl: `${discordFake.url}/api/users/@me`,
          authorizationParams: { prompt: "none", state: "attacker-chosen" },
        },
        acme: {
          type: "oauth2",
          clientId: "acme-client",
          clientSecret: "acme-secret",
          authUrl: `${acmeFake.url}/authorize`,
          tokenUrl: `${acmeFake.url}/token`,
          userInfoUrl: `${acmeFake.url}/me`,
          scopes: ["profile"],
          mapUserInfo: (raw) => {
            if (raw.explode) throw new Error("mapper exploded");
            return { id: raw.id as string, email: raw.mail as string, name: raw.displayName as string | undefined, emailVerified: raw.confirmed === true };
          },
        },
      },
    },
    { logger: logs.logger },
  );
});
afterAll(async () => {
  await server?.close();
  await Promise.all([githubFake, discordFake, acmeFake].map((f) => f?.close()));
});

/** The browser of the flow under way: `start` opens a fresh one, `callback` comes back in it (its state cookie along). */
let browser = new Browser();

async function start(provider: string, body: Record<string, unknown> = {}) {
  browser = new Browser();
  const res = await browser.post(`${server.auth}/sign-in/social`, { provider, ...body });
  expect(res.status, res.text).toBe(200);
  return res.body.url as string;
}

const callback = (provider: string, code: string, state: string) => browser.get(`${server.auth}/callback/${provider}?code=${code}&state=${state}`);

function expectAuthorizationUrl(url: string, endpoint: string, clientId: string, provider: string, scope: string) {
  const parsed = new URL(url);
  expect(`${parsed.origin}${parsed.pathname}`).toBe(endpoint);
  const q = parsed.searchParams;
  expect(q.get("response_type")).toBe("code");
  expect(q.get("client_id")).toBe(clientId);
  expect(q.get("redirect_uri")).toBe(callbackUri(provider));
  expect(q.get("scope")).toBe(scope);
  expect(q.get("state")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(q.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(q.get("code_challenge_method")).toBe("S256");
  expect(q.has("nonce")).toBe(false);
  return q;
}

async function sessionUser(res: { headers: Headers }) {
  const cookie = cookieFrom(res.headers)!;
  return { cookie, user: (await get(`${server.auth}/get-session`, { cookie })).body.user };
}

describe("github", () => {
  it("authorization URL: read:user and user:email, PKCE S256, state, redirect_uri", async () => {
    expectAuthorizationUrl(await start("github"), `${githubFake.url}/login/oauth/authorize`, "gh-client", "github", "read:user user:email");
  });

  it("a public email, verified per /user/emails; client_secret_post; numeric id; comma-separated scopes", async () => {
    const { code, state, accessToken } = github.approve(await start("github", { callbackURL: "/gh" }));
    githubUsers.set(accessToken, {
      user: { id: 5551234, login: "octocat", name: "The Octocat", email: "Octo@GitHub.test", avatar_url: "https://avatars.example.test/u/5551234" },
      emails: [{ email: "octo@github.test", primary: true, verified: true, visibility: "public" }],
    });
    const res = await callback("github", code, state);
    expect(res.status, res.text).toBe(302);
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/gh`);
    const { cookie, user } = await sessionUser(res);
    expect(user).toMatchObject({ email: "octo@github.test", emailVerified: true, name: "The Octocat", image: "https://avatars.example.test/u/5551234" });
    const tokenRequest = githubFake.requests.find((r) => r.path === "/login/oauth/access_token" && r.form.get("code") === code)!;
    expect(tokenRequest.headers.authorization).toBeUndefined();
    expect(tokenRequest.headers.accept).toBe("application/json");
    expect(tokenRequest.form.get("grant_type")).toBe("authorization_code");
    const accounts = (await get(`${server.auth}/list-accounts`, { cookie })).body;
    expect(accounts[0]).toMatchObject({ providerId: "github", accountId: "5551234", scopes: ["read:user", "user:email"] });

    // No expiry and no refresh token from GitHub: the token is answered as is; refreshing is refused.
    const token = await post(`${server.auth}/get-access-token`, { providerId: "github" }, { cookie });
    expect(token.body).toEqual({ accessToken, accessTokenExpiresAt: null, scopes: ["read:user", "user:email"] });
    expectError(await post(`${server.auth}/refresh-token`, { providerId: "github" }, { cookie }), 400, "REFRESH_TOKEN_NOT_FOUND");
    const info = await get(`${server.auth}/account-info?accountId=5551234`, { cookie });
    expect(info.body.user).toEqual({ id: "5551234", email: "Octo@GitHub.test", name: "The Octocat", image: "https://avatars.example.test/u/5551234", emailVerified: true });
    expect(info.body.data).toMatchObject({ id: 5551234, login: "octocat" });
  });

  it("a private email falls back to the primary verified address of /user/emails", async () => {
    const { code, state, accessToken } = github.approve(await start("github"));
    githubUsers.set(accessToken, {
      user: { id: 777, login: "private-person", name: null, email: null, avatar_url: null },
      emails: [
        { email: "old@private.test", primary: false, verified: true },
        { email: "noreply@private.test", primary: false, verified: false },
        { email: "main@private.test", primary: true, verified: true },
      ],
    });
    const res = await callback("github", code, state);
    expect(res.status, res.text).toBe(302);
    expect((await sessionUser(res)).user).toMatchObject({ email: "main@private.test", emailVerified: true, name: "private-person", image: null });
  });

  it("an unverified primary address stays unverified", async () => {
    const { code, state, accessToken } = github.approve(await start("github"));
    githubUsers.set(accessToken, { user: { id: 778, login: "unverified", email: null }, emails: [{ email: "fresh@private.test", primary: true, verified: false }] });
    const res = await callback("github", code, state);
    expect((await sessionUser(res)).user).toMatchObject({ email: "fresh@private.test", emailVerified: false });
  });

  it("no email anywhere: 500 OAUTH_PROVIDER_ERROR, the cause in the log with the request id", async () => {
    const { code, state, accessToken } = github.approve(await start("github"));
    githubUsers.set(accessToken, { user: { id: 779, login: "ghost", email: null }, emails: [] });
    const res = await callback("github", code, state);
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    expect(res.body.requestId).toEqual(expect.any(String));
    const logged = logs.entries().find((e) => e.requestId === res.body.requestId && e.msg === "oauth provider failure");
    expect(logged).toMatchObject({ level: 50, provider: "github", step: "user info", cause: { name: "ProfileError", message: expect.stringContaining("email") } });
  });

  it("a bad code (GitHub's 200 error body): 500 OAUTH_PROVIDER_ERROR", async () => {
    const url = await start("github");
    const state = new URL(url).searchParams.get("state")!;
    const res = await callback("github", "code_forged", state);
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    const logged = logs.entries().find((e) => e.requestId === res.body.requestId && e.msg === "oauth provider failure");
    expect(logged?.cause).toMatchObject({ kind: "status", oauthError: { error: "bad_verification_code" } });
  });
});

describe("discord", () => {
  it("authorization URL: identify and email, PKCE S256; operator params never override the flow's", async () => {
    const q = expectAuthorizationUrl(await start("discord"), `${discordFake.url}/oauth2/authorize`, "dc-client", "discord", "identify email");
    expect(q.get("prompt")).toBe("none");
    expect(q.get("state")).not.toBe("attacker-chosen");
  });

  it("maps the user: global name, avatar URL, verified email; Basic client auth; refresh through the provider", async () => {
    const { code, state, accessToken } = discord.approve(await start("discord"));
    const profile = { id: "80351110224678912", username: "nelly", global_name: "Nelly", avatar: "8342729096ea3675442027381ff50dfe", email: "Nelly@Discord.test", verified: true };
    discordUsers.set(accessToken, profile);
    const res = await callback("discord", code, state);
    expect(res.status, res.text).toBe(302);
    const { cookie, user } = await sessionUser(res);
    expect(user).toMatchObject({
      email: "nelly@discord.test",
      emailVerified: true,
      name: "Nelly",
      image: "https://cdn.discordapp.com/avatars/80351110224678912/8342729096ea3675442027381ff50dfe.png",
    });
    expect((await get(`${server.auth}/list-accounts`, { cookie })).body[0]).toMatchObject({ accountId: "80351110224678912", scopes: ["identify", "email"] });

    const refreshed = await post(`${server.auth}/refresh-token`, { providerId: "discord" }, { cookie });
    expect(refreshed.status, refreshed.text).toBe(200);
    expect(refreshed.body).toMatchObject({ refreshToken: `rt_${refreshed.body.accessToken}`, scope: "identify,email", idToken: null, accountId: "80351110224678912" });
    expect(refreshed.body.accessToken).not.toBe(accessToken);

    discordRefreshFails = true;
    const failed = await post(`${server.auth}/refresh-token`, { providerId: "discord" }, { cookie });
    discordRefreshFails = false;
    expectError(failed, 500, "OAUTH_PROVIDER_ERROR");
    const logged = logs.entries().find((e) => e.requestId === failed.body.requestId && e.msg === "oauth provider failure");
    expect(logged).toMatchObject({ step: "token refresh", cause: { kind: "status", status: 500 } });
  });

  it("an unverified Discord email is not verified here", async () => {
    const { code, state, accessToken } = discord.approve(await start("discord"));
    discordUsers.set(accessToken, { id: "80351110224678913", username: "newbie", global_name: null, avatar: null, email: "newbie@discord.test", verified: false });
    const res = await callback("discord", code, state);
    expect((await sessionUser(res)).user).toMatchObject({ email: "newbie@discord.test", emailVerified: false, name: "newbie", image: "https://cdn.discordapp.com/embed/avatars/5.png" });
  });
});

describe("a generic provider that fails", () => {
  const good = (req: RecordedRequest): FakeReply => {
    const creds = basicCredentials(req);
    const grant = creds?.[0] === "acme-client" && creds[1] === "acme-secret" ? acme.redeem(req) : null;
    return grant ? { json: { access_token: grant.accessToken, token_type: "Bearer", expires_in: 60 } } : { status: 400, json: { error: "invalid_grant" } };
  };

  async function attempt(token: typeof acmeToken, userInfo: () => FakeReply, body: Record<string, unknown> = {}) {
    acmeToken = token;
    acmeUserInfo = userInfo;
    const { code, state } = acme.approve(await start("acme", body));
    return callback("acme", code, state);
  }

  function loggedCause(res: { body: { requestId: string } }): Record<string, any> {
    const entry = logs.entries().find((e) => e.requestId === res.body.requestId && e.msg === "oauth provider failure");
    expect(entry, "no log line for the failure").toBeDefined();
    return entry!;
  }

  it("signs in when it behaves (mapUserInfo over its own JSON)", async () => {
    const res = await attempt(good, () => ({ json: { id: "acme-1", mail: "one@acme.test", displayName: "One", confirmed: true } }));
    expect(res.status, res.text).toBe(302);
    expect((await sessionUser(res)).user).toMatchObject({ email: "one@acme.test", name: "One", emailVerified: true });
  });

  it("a 500 from the token endpoint", async () => {
    const res = await attempt(() => ({ status: 500, text: "upstream exploded" }), () => ({ json: {} }));
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    expect(res.text).not.toContain("exploded");
    expect(loggedCause(res)).toMatchObject({ provider: "acme", step: "token exchange", cause: { kind: "status", status: 500 } });
  });

  it("a user-info body without email (mapUserInfo result lacks it)", async () => {
    const res = await attempt(good, () => ({ json: { id: "acme-2", displayName: "No Mail" } }));
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    expect(loggedCause(res)).toMatchObject({ step: "user info", cause: { name: "ProfileError", message: expect.stringContaining("email") } });
  });

  it("a user-info body without id, with an email that is not one, not JSON, or a mapper that throws", async () => {
    for (const userInfo of [
      () => ({ json: { mail: "noid@acme.test" } }),
      () => ({ json: { id: "acme-3", mail: "not an email" } }),
      () => ({ text: "<html>login</html>" }),
      () => ({ json: { id: "acme-4", mail: "x@acme.test", explode: true } }),
      () => ({ status: 500, json: { error: "server_error" } }),
    ]) {
      const res = await attempt(good, userInfo);
      expectError(res, 500, "OAUTH_PROVIDER_ERROR");
      expect(loggedCause(res).step).toBe("user info");
    }
  });

  it("a redirect from the token endpoint is not followed", async () => {
    const before = acmeFake.requests.filter((r) => r.path === "/elsewhere").length;
    const res = await attempt(() => ({ status: 302, json: {} }), () => ({ json: {} }));
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    expect(loggedCause(res).cause).toMatchObject({ kind: "redirect", status: 302 });
    expect(acmeFake.requests.filter((r) => r.path === "/elsewhere").length).toBe(before);
  });

  it("a token endpoint that does not answer in time", async () => {
    const res = await attempt(() => "hang", () => ({ json: {} }));
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
    expect(loggedCause(res).cause).toMatchObject({ kind: "timeout" });
  });

  it("a token that is not a Bearer token", async () => {
    const res = await attempt(() => ({ json: { access_token: "mac-token", token_type: "mac" } }), () => ({ json: {} }));
    expectError(res, 500, "OAUTH_PROVIDER_ERROR");
  });

  it("with an errorCallbackURL the failure is a redirect", async () => {
    const res = await attempt(() => ({ status: 503, json: {} }), () => ({ json: {} }), { errorCallbackURL: "/social-error" });
    expect(res.status).toBe(302);
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/social-error?error=OAUTH_PROVIDER_ERROR`);
    expect(cookieFrom(res.headers)).toBeNull();
  });

  it("no code, token or client secret ever reaches the log", () => {
    const text = logs.lines.join("\n");
    const secrets = [
      "gh-secret",
      "dc secret/+",
      "acme-secret",
      ...[github, discord, acme].flatMap((g) => [...g.byCode.keys()]),
      ...githubUsers.keys(),
      ...discordUsers.keys(),
      ...[githubFake, discordFake, acmeFake].flatMap((f) => f.requests.flatMap((r) => [r.form.get("code"), r.form.get("code_verifier"), r.form.get("refresh_token")])),
    ].filter((s): s is string => Boolean(s));
    expect(secrets.length).toBeGreaterThan(10);
    for (const secret of secrets) expect(text).not.toContain(secret);
  });
});
