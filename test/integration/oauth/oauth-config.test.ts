import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { MockAgent } from "undici";
import { describe, expect, it } from "vitest";
import { applyEnv, resolveConfig } from "../../../src/config/index.ts";
import { createPortcullis, type PortcullisConfig } from "../../../src/index.ts";
import { cookieFrom, get } from "../../harness/http.ts";
import { startTestServer } from "../../harness/server.ts";
import { Browser, callbackUri, s256 } from "../../harness/oauth-helpers.ts";

/** The provider registry in the config: validation at start, env shortcuts, the injectable dispatcher. */

const acme = {
  type: "oauth2" as const,
  clientId: "acme",
  clientSecret: "acme-secret",
  authUrl: "https://sso.example.test/authorize",
  tokenUrl: "https://sso.example.test/token",
  userInfoUrl: "https://sso.example.test/userinfo",
  scopes: ["openid"],
  mapUserInfo: (raw: Record<string, unknown>) => ({ id: raw.sub as string, email: raw.email as string, emailVerified: raw.email_verified as boolean }),
};

function rejection(config: unknown): string {
  try {
    resolveConfig(config as PortcullisConfig);
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error(`accepted: ${JSON.stringify(config)}`);
}

describe("provider config validation", () => {
  const cases: [string, unknown, RegExp][] = [
    ["a generic provider without tokenUrl", { providers: { acme: { ...acme, tokenUrl: undefined } } }, /providers\.acme\.tokenUrl/],
    ["a generic provider with a relative userInfoUrl", { providers: { acme: { ...acme, userInfoUrl: "/userinfo" } } }, /providers\.acme\.userInfoUrl: must be an absolute http\(s\) URL/],
    ["a generic provider without mapUserInfo", { providers: { acme: { ...acme, mapUserInfo: undefined } } }, /providers\.acme\.mapUserInfo/],
    ["a built-in without its secret", { providers: { github: { type: "github", clientId: "x" } } }, /providers\.github\.clientSecret/],
    ["a built-in with an empty client id", { providers: { work: { type: "google", clientId: "", clientSecret: "s" } } }, /providers\.work\.clientId/],
    ["a bad endpoint override", { providers: { discord: { type: "discord", clientId: "x", clientSecret: "y", tokenUrl: "ftp://x" } } }, /providers\.discord\.tokenUrl/],
    ["an unknown type", { providers: { okta: { type: "saml", clientId: "x", clientSecret: "y" } } }, /providers\.okta\.type/],
    ["an unknown key", { providers: { github: { type: "github", clientId: "x", clientSecret: "y", tenant: "z" } } }, /providers\.github.*tenant/],
    ["a name that is not a path segment", { providers: { "Big Corp": acme } }, /providers\.Big Corp: provider names are lower-case/],
    ["the reserved name credential", { providers: { credential: acme } }, /providers\.credential: is reserved/],
    ["a bad scope", { providers: { acme: { ...acme, scopes: ["two words"] } } }, /providers\.acme\.scopes/],
    ["requireIssuerParameter without an issuer", { providers: { acme: { ...acme, requireIssuerParameter: true } } }, /providers\.acme\.issuer: is required when requireIssuerParameter/],
  ];
  for (const [title, config, pattern] of cases) {
    it(`rejects ${title}, naming it`, () => {
      expect(rejection(config)).toMatch(pattern);
    });
  }

  it("stops createPortcullis at start", async () => {
    const file = join(tmpdir(), `pc_oauth_config_${process.pid}.db`);
    const err = await createPortcullis({ databaseUrl: `sqlite:${file}`, logLevel: "silent", providers: { github: { type: "github", clientId: "x" } } } as unknown as PortcullisConfig).then(
      () => null,
      (e: Error) => e,
    );
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
    expect(err?.message).toMatch(/Invalid Portcullis config:[\s\S]*providers\.github\.clientSecret/);
  });

  it("accepts built-ins with only an id and a secret", () => {
    const config = resolveConfig({
      providers: { google: { type: "google", clientId: "g", clientSecret: "gs" }, github: { type: "github", clientId: "h", clientSecret: "hs" } },
    });
    expect(config.providers.google).toMatchObject({ type: "google", clientId: "g" });
    expect(config.trustedProviders).toEqual([]);
    expect(config.http).toMatchObject({ connectTimeoutMs: 5000, headersTimeoutMs: 10000, bodyTimeoutMs: 10000, maxResponseBytes: 1048576 });
  });
});

describe("env shortcuts", () => {
  it("GOOGLE_, GITHUB_ and DISCORD_CLIENT_ID/_SECRET register the built-ins", () => {
    const config = resolveConfig(
      applyEnv({}, { GOOGLE_CLIENT_ID: "gid", GOOGLE_CLIENT_SECRET: "gsecret", GITHUB_CLIENT_ID: "hid", GITHUB_CLIENT_SECRET: "hsecret", DISCORD_CLIENT_ID: "did", DISCORD_CLIENT_SECRET: "dsecret" }),
    );
    expect(config.providers).toEqual({
      google: { type: "google", clientId: "gid", clientSecret: "gsecret" },
      github: { type: "github", clientId: "hid", clientSecret: "hsecret" },
      discord: { type: "discord", clientId: "did", clientSecret: "dsecret" },
    });
  });

  it("complete a configured built-in, keeping its overrides", () => {
    const base: PortcullisConfig = { providers: { google: { type: "google", clientId: "from-file", clientSecret: "old", scopes: ["openid", "email"] } } };
    const config = resolveConfig(applyEnv(base, { GOOGLE_CLIENT_SECRET: "rotated" }));
    expect(config.providers.google).toEqual({ type: "google", clientId: "from-file", clientSecret: "rotated", scopes: ["openid", "email"] });
  });

  it("half a pair fails validation, naming the missing half", () => {
    expect(rejection(applyEnv({}, { GITHUB_CLIENT_ID: "only-the-id" }))).toMatch(/providers\.github\.clientSecret/);
    expect(resolveConfig(applyEnv({}, {})).providers).toEqual({});
  });
});

describe("the injectable dispatcher", () => {
  it("carries every outgoing call: a whole sign-in through an undici MockAgent, no network", async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const server = await startTestServer({ providers: { acme }, http: { dispatcher: agent } });
    try {
      const browser = new Browser();
      const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "acme" });
      const q = new URL(start.body.url).searchParams;
      expect(q.get("redirect_uri")).toBe(callbackUri("acme"));
      const sso = agent.get("https://sso.example.test");
      sso
        .intercept({
          path: "/token",
          method: "POST",
          body: (body: string) => {
            const form = new URLSearchParams(body);
            return form.get("code") === "mock-code" && s256(form.get("code_verifier") ?? "") === q.get("code_challenge") && form.get("redirect_uri") === callbackUri("acme");
          },
        })
        .reply(200, { access_token: "mock-access", token_type: "Bearer", expires_in: 3600 }, { headers: { "content-type": "application/json" } });
      sso
        .intercept({ path: "/userinfo", method: "GET", headers: { authorization: "Bearer mock-access" } })
        .reply(200, { sub: "m-1", email: "mock@sso.example.test", email_verified: true }, { headers: { "content-type": "application/json" } });
      const res = await browser.get(`${server.auth}/callback/acme?code=mock-code&state=${q.get("state")}`);
      expect(res.status, res.text).toBe(302);
      const cookie = cookieFrom(res.headers)!;
      expect((await get(`${server.auth}/get-session`, { cookie })).body.user.email).toBe("mock@sso.example.test");
      agent.assertNoPendingInterceptors();
    } finally {
      await server.close();
      await agent.close();
    }
  });
});
