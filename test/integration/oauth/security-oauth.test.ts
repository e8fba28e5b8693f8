import { createAuthClient } from "better-auth/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieFrom, get, post, TEST_ORIGIN, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { signUp } from "../../harness/admin-helpers.ts";
import { atServer, Browser, callbackUri, expectError, oidcProviders, PUBLIC_URL, STATE_CLEARED, STATE_COOKIE, startAndAuthorize } from "../../harness/oauth-helpers.ts";

/**
 * Against the real OpenID provider: the OAuth state is bound to the
 * browser that started the flow (login and linking CSRF), and the RFC 9207 `iss` of the
 * authorization response must name the provider's issuer (mix-up defence).
 */

const HTTPS_PUBLIC_URL = "https://auth.example.test";

let oidc: TestOidcProvider;
let server: TestServer;
/** `account.skipStateCookieCheck: true` (native apps). */
let lax: TestServer;
/** Served at an https public URL: `__Secure-` cookies. */
let secure: TestServer;

let n = 0;
function account() {
  n += 1;
  const sub = `sec-${Date.now().toString(36)}-${n}`;
  const acct = { sub, email: `${sub}@example.test`, email_verified: true, name: `Security ${n}` };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  const names = ["oidc", "google", "oidc-lax-iss", "mixed-up"];
  oidc = await startOidcProvider({ redirectUris: [...names.map(callbackUri), `${HTTPS_PUBLIC_URL}/api/auth/callback/oidc`] });
  const providers = oidcProviders(oidc);
  server = await startTestServer({
    providers: {
      ...providers,
      // Issuer known, `iss` support not advertised: a wrong iss is refused, a missing one is not.
      "oidc-lax-iss": { ...providers.oidc, requireIssuerParameter: false },
      // Registered as if it were another issuer: the real provider's responses name itself.
      "mixed-up": { ...providers.oidc, issuer: "https://idp.other.example" },
    },
  });
  lax = await startTestServer({ providers, account: { skipStateCookieCheck: true } });
  secure = await startTestServer({ providers, publicUrl: HTTPS_PUBLIC_URL });
});
afterAll(async () => {
  await Promise.all([server?.close(), lax?.close(), secure?.close()]);
  await oidc?.close();
});

async function countRows(target: TestServer, sql: string, params: unknown[]): Promise<number> {
  const rows = await target.portcullis.app.orm.em.fork().getConnection().execute(sql, params);
  return Number(Object.values(rows[0] as Record<string, unknown>)[0]);
}
const usersWithEmail = (email: string, target = server) => countRows(target, "select count(*) as n from users where email = ?", [email]);
const accountsOf = (sub: string, target = server) => countRows(target, "select count(*) as n from accounts where account_id = ?", [sub]);
const sessionCount = (target = server) => countRows(target, "select count(*) as n from sessions", []);

/** The callback URL with one query parameter replaced (or removed with null). */
function withParam(location: string, name: string, value: string | null): string {
  const url = new URL(location);
  if (value === null) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  return url.toString();
}

function expectNoSession(res: Reply) {
  expect(cookieFrom(res.headers)).toBeNull();
  expect(res.headers.get("set-auth-token")).toBeNull();
}

describe("the state cookie", () => {
  const STATE_LINE = new RegExp(`^${STATE_COOKIE.replace(".", "\\.")}=[0-9a-f]{64}\\.[A-Za-z0-9_-]{43}; Max-Age=600; Path=/; HttpOnly; SameSite=Lax$`);

  it("is set by every start of a flow: sign-in/social and link-social, over REST and tRPC", async () => {
    const user = await signUp(server);
    const starts = [
      await post(`${server.auth}/sign-in/social`, { provider: "oidc" }),
      await post(`${server.auth}/sign-in/social`, { provider: "oidc", disableRedirect: true }),
      await post(`${server.auth}/link-social`, { provider: "oidc" }, { cookie: user.cookie }),
      await post(`${server.url}/api/trpc/signIn.social`, { provider: "oidc" }),
      await post(`${server.url}/api/trpc/linkSocial`, { provider: "oidc", disableRedirect: true }, { cookie: user.cookie }),
    ];
    for (const start of starts) {
      expect(start.status, start.text).toBe(200);
      expect(start.headers.getSetCookie()).toEqual([expect.stringMatching(STATE_LINE)]);
    }
    // Each start binds its own state: the cookies differ.
    expect(new Set(starts.map((s) => s.headers.getSetCookie()[0])).size).toBe(starts.length);
  });

  it("on https it is `__Secure-` and Secure, and the flow completes with it", async () => {
    const acct = account();
    const browser = new Browser();
    const start = await browser.post(`${secure.auth}/sign-in/social`, { provider: "oidc", callbackURL: "/in" });
    expect(start.status, start.text).toBe(200);
    expect(start.headers.getSetCookie()).toEqual([expect.stringMatching(/^__Secure-portcullis\.state=[^;]+; Max-Age=600; Path=\/; HttpOnly; Secure; SameSite=Lax$/)]);
    const outcome = await oidc.authorize(start.body.url, { sub: acct.sub });
    if (outcome.kind !== "redirect") throw new Error("redirect expected");
    const location = outcome.location.replace(HTTPS_PUBLIC_URL, secure.url);
    expectError(await get(location), 400, "STATE_MISMATCH");
    const callback = await browser.get(location);
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${HTTPS_PUBLIC_URL}/in`);
    expect(callback.headers.getSetCookie().some((c) => c.startsWith("__Secure-portcullis.session_token="))).toBe(true);
    expect(callback.headers.getSetCookie()).toContain("__Secure-portcullis.state=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax");
  });

  it("a forged or tampered cookie does not bind", async () => {
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
    const real = browser.value(STATE_COOKIE)!;
    const [digest, mac] = real.split(".") as [string, string];
    const state = new URL(location).searchParams.get("state")!;
    for (const forged of [digest, `${digest}.${mac.slice(0, -2)}AA`, state, `${state}.${mac}`]) {
      expectError(await get(location, { cookie: `${STATE_COOKIE}=${forged}` }), 400, "STATE_MISMATCH");
    }
    expect(await usersWithEmail(acct.email)).toBe(0);
    // None of that used the state up: the browser that started the flow still finishes it.
    expect((await browser.get(location)).status).toBe(302);
  });

  it("is cleared by every callback that used its state up, whatever the failure and however it is answered", async () => {
    const local = await signUp(server);
    // ACCOUNT_NOT_LINKED (an unverified provider email that matches a user), answered as JSON, as
    // the browser's error page, and as a redirect to the flow's errorCallbackURL.
    for (const [accept, body, status] of [
      ["application/json", {}, 409],
      ["text/html", {}, 302],
      ["application/json", { errorCallbackURL: "/oops" }, 302],
    ] as const) {
      const sub = `${account().sub}-unverified`;
      oidc.setAccount({ sub, email: local.email, email_verified: false });
      const browser = new Browser();
      const { location } = await startAndAuthorize(server, oidc, browser, "oidc", sub, body);
      const res = await browser.get(location, { headers: { accept } });
      expect(res.status, `${accept} ${JSON.stringify(body)}: ${res.text}`).toBe(status);
      if (status === 409) expect(res.body.code).toBe("ACCOUNT_NOT_LINKED");
      else expect(res.headers.get("location")).toMatch(/error=ACCOUNT_NOT_LINKED$/);
      expect(res.headers.getSetCookie(), `${accept} ${JSON.stringify(body)}`).toEqual([STATE_CLEARED]);
      expect(browser.value(STATE_COOKIE)).toBeNull();
    }
    // ISSUER_MISMATCH and the provider's own error use the state up too.
    const acct = account();
    for (const change of [(l: string) => withParam(l, "iss", "https://attacker.example"), (l: string) => withParam(withParam(l, "code", null), "error", "access_denied")]) {
      const browser = new Browser();
      const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
      const res = await browser.get(change(location));
      expect(res.status, res.text).toBe(400);
      expect(res.headers.getSetCookie()).toEqual([STATE_CLEARED]);
      expect(browser.value(STATE_COOKIE)).toBeNull();
    }
    expect(await usersWithEmail(acct.email)).toBe(0);
  });
});

describe("login CSRF: a callback URL finished in another browser", () => {
  it("is refused in a cookie-less client and in a browser with its own state cookie; nothing is created", async () => {
    const attacker = account();
    const attackerBrowser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, attackerBrowser, "oidc", attacker.sub);
    const sessionsBefore = await sessionCount();

    // Browser B with no cookie at all (the attacker sent it the link).
    const bare = await get(location);
    expectError(bare, 400, "STATE_MISMATCH");
    expectNoSession(bare);

    // Browser B in the middle of its own sign-in: its state cookie names another state.
    const victim = new Browser();
    await victim.post(`${server.auth}/sign-in/social`, { provider: "oidc" });
    const victimCookie = victim.value(STATE_COOKIE);
    const crossed = await victim.get(location);
    expectError(crossed, 400, "STATE_MISMATCH");
    expectNoSession(crossed);
    // Its own flow's cookie stays for its own flow.
    expect(victim.value(STATE_COOKIE)).toBe(victimCookie);

    // The tRPC form refuses it too.
    const back = new URL(location).searchParams;
    const viaTrpc = await post(`${server.url}/api/trpc/callback`, { provider: "oidc", code: back.get("code"), state: back.get("state"), iss: back.get("iss") });
    expect(viaTrpc.status, viaTrpc.text).toBe(400);
    expect(viaTrpc.body.error.data.authCode).toBe("STATE_MISMATCH");
    expectNoSession(viaTrpc);

    expect(await usersWithEmail(attacker.email)).toBe(0);
    expect(await accountsOf(attacker.sub)).toBe(0);
    expect(await sessionCount()).toBe(sessionsBefore);
  });

  it("is sent to the flow's errorCallbackURL when it has one", async () => {
    const attacker = account();
    const { location } = await startAndAuthorize(server, oidc, new Browser(), "oidc", attacker.sub, { errorCallbackURL: "/oauth-error" });
    const res = await get(location);
    expect(res.status, res.text).toBe(302);
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/oauth-error?error=STATE_MISMATCH`);
    expectNoSession(res);
    expect(await usersWithEmail(attacker.email)).toBe(0);
  });

  it("does not burn the state: the browser that started the flow can still finish it", async () => {
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
    expectError(await get(location), 400, "STATE_MISMATCH");
    const mine = await browser.get(location);
    expect(mine.status, mine.text).toBe(302);
    expect((await get(`${server.auth}/get-session`, { cookie: cookieFrom(mine.headers)! })).body.user.email).toBe(acct.email);
    // Used up now, and the state cookie is gone from the browser.
    expect(browser.value(STATE_COOKIE)).toBeNull();
    expectError(await browser.get(location), 400, "STATE_MISMATCH");
  });
});

describe("linking CSRF: the attacker's link-social finished by the victim's browser", () => {
  for (const via of ["REST", "tRPC"] as const) {
    it(`is refused and links nothing (${via})`, async () => {
      const attacker = await signUp(server);
      const victimIdp = account();
      // The victim is signed in here too (a session cookie of their own), and at the provider.
      const victimUser = await signUp(server);
      const start =
        via === "REST"
          ? await post(`${server.auth}/link-social`, { provider: "oidc", disableRedirect: true }, { bearer: attacker.token })
          : await post(`${server.url}/api/trpc/linkSocial`, { provider: "oidc", disableRedirect: true }, { bearer: attacker.token });
      expect(start.status, start.text).toBe(200);
      const url = via === "REST" ? start.body.url : start.body.result.data.url;

      // The attacker sends the authorization URL; the victim's browser follows it to the end.
      const victimBrowser = new Browser(victimUser.cookie);
      const outcome = await oidc.authorize(url, { sub: victimIdp.sub });
      if (outcome.kind !== "redirect") throw new Error("redirect expected");
      const callback = await victimBrowser.get(atServer(server, outcome.location));
      expectError(callback, 400, "STATE_MISMATCH");
      expectNoSession(callback);

      expect(await accountsOf(victimIdp.sub)).toBe(0);
      const attackerAccounts = await get(`${server.auth}/list-accounts`, { bearer: attacker.token });
      expect(attackerAccounts.body.map((a: { providerId: string }) => a.providerId)).toEqual(["credential"]);
      // Signing in with the victim's provider account makes the victim a user of their own.
      const victimBrowser2 = new Browser();
      const own = await startAndAuthorize(server, oidc, victimBrowser2, "oidc", victimIdp.sub);
      const signedIn = await victimBrowser2.get(own.location);
      expect(signedIn.status, signedIn.text).toBe(302);
      const session = await get(`${server.auth}/get-session`, { cookie: cookieFrom(signedIn.headers)! });
      expect(session.body.user.id).not.toBe(attacker.id);
      expect(session.body.user.email).toBe(victimIdp.email);
    });
  }

  it("the same browser still links (REST, with disableRedirect)", async () => {
    const user = await signUp(server);
    const idp = account();
    const browser = new Browser(user.cookie);
    const { start, location } = await startAndAuthorize(server, oidc, browser, "oidc", idp.sub, { disableRedirect: true, callbackURL: "/linked" }, true);
    expect(start.body.redirect).toBe(false);
    const callback = await browser.get(location);
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/linked`);
    expect(await accountsOf(idp.sub)).toBe(1);
  });
});

describe("the flows that must keep working", () => {
  it("the better-auth client SDK: signIn.social, then the browser follows the URL", async () => {
    const acct = account();
    const browser = new Browser();
    // The SDK's fetch, as a browser runs it: same cookie jar, Origin on every request.
    const customFetchImpl = async (input: string | URL | Request, init?: RequestInit) => {
      const headers = new Headers(init?.headers);
      if (browser.cookie) headers.set("cookie", browser.cookie);
      headers.set("origin", TEST_ORIGIN);
      const res = await fetch(input, { ...init, headers, redirect: "manual" });
      browser.store(res.headers);
      return res;
    };
    const client = createAuthClient({ baseURL: server.url, basePath: "/api/auth", fetchOptions: { customFetchImpl } });
    const started = await client.signIn.social({ provider: "oidc", callbackURL: "/sdk" });
    expect(started.error).toBeNull();
    expect(started.data).toMatchObject({ redirect: true, url: expect.stringContaining(oidc.discovery.authorization_endpoint) });
    expect(browser.value(STATE_COOKIE)).not.toBeNull();
    const outcome = await oidc.authorize(started.data!.url!, { sub: acct.sub });
    if (outcome.kind !== "redirect") throw new Error("redirect expected");
    const callback = await browser.get(atServer(server, outcome.location));
    expect(callback.status, callback.text).toBe(302);
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/sdk`);
    const session = await client.getSession();
    expect(session.data?.user.email).toBe(acct.email);
  });

  it("disableRedirect: the URL opened in the same browser signs in", async () => {
    const acct = account();
    const browser = new Browser();
    const { start, location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub, { disableRedirect: true });
    expect(start.body.redirect).toBe(false);
    expect(start.headers.get("location")).toBeNull();
    const callback = await browser.get(location);
    expect(callback.status, callback.text).toBe(302);
    expect(cookieFrom(callback.headers)).not.toBeNull();
  });

  it("account.skipStateCookieCheck: a callback without the cookie is accepted (native apps)", async () => {
    const acct = account();
    const { location } = await startAndAuthorize(lax, oidc, new Browser(), "oidc", acct.sub);
    const systemBrowser = await get(location);
    expect(systemBrowser.status, systemBrowser.text).toBe(302);
    expect((await get(`${lax.auth}/get-session`, { cookie: cookieFrom(systemBrowser.headers)! })).body.user.email).toBe(acct.email);
    // Still single use.
    expectError(await get(location), 400, "STATE_MISMATCH");
  });
});

describe("RFC 9207: the authorization response's iss", () => {
  it("the provider names itself and the callback accepts its issuer", async () => {
    expect(oidc.discovery.authorization_response_iss_parameter_supported).toBe(true);
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
    expect(new URL(location).searchParams.get("iss")).toBe(oidc.issuer);
    const callback = await browser.get(location);
    expect(callback.status, callback.text).toBe(302);
    expect(await usersWithEmail(acct.email)).toBe(1);
  });

  it("400 ISSUER_MISMATCH for an iss that is not the provider's; nothing created, the state used up", async () => {
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
    const cookie = browser.cookie!;
    const res = await get(withParam(location, "iss", "https://attacker.example"), { cookie });
    expectError(res, 400, "ISSUER_MISMATCH");
    expectNoSession(res);
    expect(await usersWithEmail(acct.email)).toBe(0);
    expect(await accountsOf(acct.sub)).toBe(0);
    // A mixed-up response ends the flow: the genuine one cannot follow it.
    expectError(await get(location, { cookie }), 400, "STATE_MISMATCH");
  });

  it("400 ISSUER_MISMATCH without iss when the provider advertises it", async () => {
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
    expectError(await browser.get(withParam(location, "iss", null)), 400, "ISSUER_MISMATCH");
    expect(await usersWithEmail(acct.email)).toBe(0);
  });

  it("a provider registered with another issuer (mix-up): its real responses are refused, to errorCallbackURL too", async () => {
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "mixed-up", acct.sub, { errorCallbackURL: "/mixed" });
    const res = await browser.get(location);
    expect(res.status, res.text).toBe(302);
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/mixed?error=ISSUER_MISMATCH`);
    expectNoSession(res);
    expect(await usersWithEmail(acct.email)).toBe(0);
  });

  it("issuer known, iss not advertised: a wrong iss is refused, a missing one accepted", async () => {
    const acct = account();
    const first = new Browser();
    const wrong = await startAndAuthorize(server, oidc, first, "oidc-lax-iss", acct.sub);
    expectError(await first.get(withParam(wrong.location, "iss", `${oidc.issuer}/`)), 400, "ISSUER_MISMATCH");
    expect(await usersWithEmail(acct.email)).toBe(0);
    const second = new Browser();
    const missing = await startAndAuthorize(server, oidc, second, "oidc-lax-iss", acct.sub);
    expect((await second.get(withParam(missing.location, "iss", null))).status).toBe(302);
    expect(await usersWithEmail(acct.email)).toBe(1);
  });

  it("the tRPC callback checks iss too", async () => {
    const acct = account();
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", acct.sub);
    const back = new URL(location).searchParams;
    const res = await browser.post(`${server.url}/api/trpc/callback`, { provider: "oidc", code: back.get("code"), state: back.get("state"), iss: "https://attacker.example" });
    expect(res.status, res.text).toBe(400);
    expect(res.body.error.data.authCode).toBe("ISSUER_MISMATCH");
    expect(await usersWithEmail(acct.email)).toBe(0);
  });
});
