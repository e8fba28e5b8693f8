import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cookieFrom, get, post, request, type Reply } from "../../harness/http.ts";
import { startOidcProvider, type TestOidcProvider } from "../../harness/oidc.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { atServer, Browser, callbackUri, expectError, oidcProviders, PUBLIC_URL, startAndAuthorize, startFakeProvider, type FakeProvider } from "../../harness/oauth-helpers.ts";

/**
 * The error page and the browser rule of OAuth callbacks (docs/wire-contract.md §9), then three small
 * callback and token details of docs/wire-contract.md §5: the form_post query's state wins, a state without
 * a code is refused before any lookup, refresh-token keeps the provider's scope string.
 */

/** What a browser sends on a top-level navigation. */
const NAVIGATION = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
const ERROR_PAGE = `${PUBLIC_URL}/api/auth/error`;

let oidc: TestOidcProvider;
let fake: FakeProvider;
let server: TestServer;
/** The fake provider's refresh answers, in turn. */
const refreshScopes: (string | undefined)[] = [];

let n = 0;
function account() {
  n += 1;
  const acct = { sub: `page-${Date.now().toString(36)}-${n}`, email: `page-${n}-${Date.now().toString(36)}@example.test`, email_verified: true };
  oidc.setAccount(acct);
  return acct;
}

beforeAll(async () => {
  oidc = await startOidcProvider({ redirectUris: ["oidc", "oidc-form"].map(callbackUri) });
  // A provider that writes its scopes GitHub's way, with commas.
  fake = await startFakeProvider((req) => {
    if (req.path === "/userinfo") return { json: { sub: "comma-user", email: "comma@example.test" } };
    const refreshing = req.form.get("grant_type") === "refresh_token";
    const scope = refreshing ? refreshScopes.shift() : "read,write";
    return { json: { access_token: `at-${Math.random()}`, token_type: "bearer", expires_in: 3600, refresh_token: "rt", ...(scope ? { scope } : {}) } };
  });
  const providers = oidcProviders(oidc);
  const comma = { type: "oauth2" as const, clientId: "c", clientSecret: "s", authUrl: `${fake.url}/authorize`, tokenUrl: `${fake.url}/token`, userInfoUrl: `${fake.url}/userinfo`, mapUserInfo: (raw: Record<string, unknown>) => ({ id: raw.sub as string, email: raw.email as string }) };
  server = await startTestServer({ providers: { ...providers, "oidc-form": { ...providers.oidc, authorizationParams: { response_mode: "form_post" } }, comma } });
});
afterAll(async () => {
  await server?.close();
  await Promise.all([oidc?.close(), fake?.close()]);
});

function expectErrorPageRedirect(res: Reply, code: string) {
  expect(res.status, res.text).toBe(302);
  expect(res.headers.get("location")).toBe(`${ERROR_PAGE}?error=${code}`);
  expect(cookieFrom(res.headers)).toBeNull();
}

describe("GET /error", () => {
  it("answers safe HTML: the code escaped, a message of ours, no script allowed", async () => {
    const res = await get(`${server.auth}/error?error=${encodeURIComponent('<script>alert("x")</script>')}&error_description=Call+us`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/script-src/);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(res.text).not.toMatch(/<script/i);
    expect(res.text).toContain("&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;");
    expect(res.text).not.toContain("Call us");
  });

  it("names our code's message; unknown, missing and prototype names get a generic one", async () => {
    expect((await get(`${server.auth}/error?error=STATE_MISMATCH`)).text).toContain("State mismatch");
    for (const q of ["?error=__proto__", "?error=constructor", ""]) {
      const res = await get(`${server.auth}/error${q}`);
      expect(res.status).toBe(200);
      expect(res.text).toContain("Signing in could not be completed");
    }
    expect((await get(`${server.auth}/error`)).text).toContain("<code>UNKNOWN</code>");
  });
});

describe("a failed callback without errorCallbackURL", () => {
  it("sends a browser navigation to the error page; a JSON client (or none) keeps the JSON error", async () => {
    const stale = `${server.auth}/callback/oidc?code=abc&state=${"x".repeat(43)}`;
    expectErrorPageRedirect(await get(stale, { headers: { accept: NAVIGATION } }), "STATE_MISMATCH");
    for (const accept of [undefined, "application/json", "*/*", "application/json, text/html;q=0.5"]) {
      expectError(await get(stale, accept ? { headers: { accept } } : {}), 400, "STATE_MISMATCH");
    }
    expectErrorPageRedirect(await get(`${server.auth}/callback/myspace?code=x&state=y`, { headers: { accept: "text/html" } }), "PROVIDER_NOT_FOUND");
    // tRPC is for programs: JSON whatever Accept says.
    const trpc = await post(`${server.url}/api/trpc/callback`, { provider: "oidc", code: "abc", state: "x".repeat(43) }, { headers: { accept: NAVIGATION } });
    expect(trpc.status).toBe(400);
    expect(trpc.body.error.data.authCode).toBe("STATE_MISMATCH");
  });

  it("the provider's refusal: error page for the browser, errorCallbackURL still wins when given", async () => {
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc" });
    const denied = await oidc.authorize(start.body.url, { deny: true });
    if (denied.kind !== "redirect") throw new Error("redirect expected");
    expectErrorPageRedirect(await browser.get(atServer(server, denied.location), { headers: { accept: NAVIGATION } }), "INVALID_CALLBACK_REQUEST");

    const withTarget = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc", errorCallbackURL: "/oops" });
    const again = await oidc.authorize(withTarget.body.url, { deny: true });
    if (again.kind !== "redirect") throw new Error("redirect expected");
    const res = await browser.get(atServer(server, again.location), { headers: { accept: NAVIGATION } });
    expect(res.headers.get("location")).toBe(`${PUBLIC_URL}/oops?error=INVALID_CALLBACK_REQUEST&provider_error=access_denied`);
  });

  it("form_post: an unknown provider's POST, and the GET it leads to, end on the error page", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded", accept: NAVIGATION };
    expectErrorPageRedirect(await request("POST", `${server.auth}/callback/myspace`, { raw: "code=x&state=y", headers: form }), "PROVIDER_NOT_FOUND");
    const posted = await request("POST", `${server.auth}/callback/oidc-form`, { raw: `code=x&state=${"y".repeat(43)}`, headers: form });
    expect(posted.status).toBe(302);
    expectErrorPageRedirect(await get(atServer(server, posted.headers.get("location")!), { headers: { accept: NAVIGATION } }), "STATE_MISMATCH");
  });
});

describe("callback and token details", () => {
  it("form_post: when body and query disagree, the query's state is the one carried on", async () => {
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "oidc-form", callbackURL: "/after" });
    const outcome = await oidc.authorize(start.body.url, { sub: account().sub });
    if (outcome.kind !== "form_post") throw new Error("form_post expected");
    const body = new URLSearchParams({ ...outcome.fields, state: "z".repeat(43) }).toString();
    const posted = await request("POST", `${atServer(server, outcome.action)}?state=${outcome.fields.state}`, { raw: body, headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(posted.status, posted.text).toBe(302);
    const getForm = new URL(posted.headers.get("location")!);
    expect(getForm.searchParams.get("state")).toBe(outcome.fields.state);
    const callback = await browser.get(atServer(server, getForm.toString()));
    expect(callback.headers.get("location")).toBe(`${PUBLIC_URL}/after`);
  });

  it("a state with no code and no provider error: 400 INVALID_CALLBACK_REQUEST before any lookup, the flow left intact", async () => {
    expectError(await get(`${server.auth}/callback/oidc?state=${"x".repeat(43)}`), 400, "INVALID_CALLBACK_REQUEST");
    const browser = new Browser();
    const { location } = await startAndAuthorize(server, oidc, browser, "oidc", account().sub, { errorCallbackURL: "/oops" });
    const state = new URL(location).searchParams.get("state")!;
    expectError(await browser.get(`${server.auth}/callback/oidc?state=${state}`), 400, "INVALID_CALLBACK_REQUEST");
    // The pending state was neither used up nor used to redirect: the real answer still signs in.
    const done = await browser.get(location);
    expect(done.status, done.text).toBe(302);
    expect(cookieFrom(done.headers)).not.toBeNull();
  });

  it("refresh-token answers the scope string as the provider wrote it, or as stored when it says none", async () => {
    const browser = new Browser();
    const start = await browser.post(`${server.auth}/sign-in/social`, { provider: "comma" });
    const state = new URL(start.body.url).searchParams.get("state")!;
    const signedIn = await browser.get(`${server.auth}/callback/comma?code=c1&state=${state}`);
    const cookie = cookieFrom(signedIn.headers)!;
    expect((await get(`${server.auth}/list-accounts`, { cookie })).body[0].scopes).toEqual(["read", "write"]);
    refreshScopes.push("read,write,admin", undefined);
    const first = await post(`${server.auth}/refresh-token`, { providerId: "comma" }, { cookie });
    expect(first.body.scope, first.text).toBe("read,write,admin");
    const second = await post(`${server.auth}/refresh-token`, { providerId: "comma" }, { cookie });
    expect(second.body.scope, second.text).toBe("read,write,admin");
    expect((await get(`${server.auth}/list-accounts`, { cookie })).body[0].scopes).toEqual(["read", "write", "admin"]);
  });
});
