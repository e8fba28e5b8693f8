import { readFileSync } from "node:fs";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { uniqueEmail } from "../harness/http.ts";
import { oidcProviders } from "../harness/oauth-helpers.ts";
import { startOidcProvider, type TestOidcProvider } from "../harness/oidc.ts";
import { freePort, startTestServer, type TestServer } from "../harness/server.ts";
import { oidcShotsDir, openPage as openPageIn, pageAuthorizeUrl, registerPageClient, RP_REDIRECT } from "./oidc-page-helpers.ts";

/**
 * The provider's sign-in page's other ways in, in a real browser: a passkey (Chrome's virtual
 * authenticator, as in passkey.test.ts) and a social provider (the real OpenID provider of
 * test/harness/oidc.ts; its login step is played over HTTP by the harness when the browser
 * gets there). Both end where email and password do: the consent page, then the client with a
 * code. Under the page's CSP, no violation; screenshots in test-output/oidc/.
 */
const REDIRECT = RP_REDIRECT;
const PASSWORD = "password123";
let shotsDir: string;
const UMD = new URL("../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js", import.meta.url);
const AUTHENTICATOR = { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const;

let server: TestServer;
let oidc: TestOidcProvider;
let browser: Browser;
let clientId: string;
let origin: string;

beforeAll(async () => {
  if (!hasChromium()) return;
  shotsDir = oidcShotsDir();
  // WebAuthn wants a domain as RP ID: localhost. The social provider must know our callback first.
  const port = await freePort();
  origin = `http://localhost:${port}`;
  oidc = await startOidcProvider({ redirectUris: [`${origin}/api/auth/callback/oidc`] });
  server = await startTestServer({ providers: { oidc: oidcProviders(oidc).oidc } }, { ownOrigin: true, publicHost: "localhost", port });
  clientId = await registerPageClient(server);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await oidc?.close();
});

const openPage = () => openPageIn(browser);
const authorizeUrl = () => pageAuthorizeUrl(`${origin}/api/auth`, clientId);

/** The provider's login step: the harness plays it over HTTP and hands the browser its redirect back to us. */
async function playProvider(page: Page, as: { sub: string } | { deny: true }) {
  await page.context().route(`${oidc.issuer}/**`, async (route) => {
    const outcome = await oidc.authorize(route.request().url(), as);
    if (outcome.kind !== "redirect") throw new Error("redirect expected");
    await route.fulfill({ status: 302, headers: { location: outcome.location } });
  });
}

async function allowAndLand(page: Page) {
  await page.waitForURL((u) => u.pathname === "/consent");
  await expect.poll(() => page.textContent("#client-name")).toBe("Grafana");
  await page.focus("#allow");
  await page.keyboard.press("Enter");
  await page.waitForURL((u) => u.origin === "https://rp.example.test");
  const back = new URL(page.url());
  expect(back.searchParams.get("code")).toEqual(expect.any(String));
  expect(back.searchParams.get("state")).toBe("xyz");
}

describe.skipIf(!hasChromium() && !process.env.CI)("the sign-in page's passkey and social buttons (headless Chromium)", () => {
  it("signs in with a passkey (usernameless) and the authorize request resumes", async () => {
    const { page, problems } = await openPage();
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    await cdp.send("WebAuthn.addVirtualAuthenticator", { options: AUTHENTICATOR });
    // A user with a passkey, registered on a scratch page of our origin with @simplewebauthn/browser.
    await page.context().route(`${origin}/scratch`, (r) => r.fulfill({ contentType: "text/html", body: `<!doctype html><script src="/scratch.js"></script>` }));
    await page.context().route(`${origin}/scratch.js`, (r) => r.fulfill({ contentType: "text/javascript", body: readFileSync(UMD, "utf8") }));
    await page.goto(`${origin}/scratch`);
    const email = uniqueEmail("oidc-passkey");
    const registered = await page.evaluate(async ([email, password]) => {
      const call = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`/api/auth${path}`, { method, headers: body ? { "content-type": "application/json" } : {}, body: body ? JSON.stringify(body) : null });
        return { status: res.status, body: await res.json() };
      };
      await call("POST", "/sign-up/email", { name: "Passkey User", email, password });
      const options = await call("GET", "/passkey/generate-register-options");
      const { clientExtensionResults: _, ...response } = await (globalThis as any).SimpleWebAuthnBrowser.startRegistration({ optionsJSON: options.body });
      const r = await call("POST", "/passkey/verify-registration", { response, name: "Laptop" });
      await call("POST", "/sign-out", {});
      return r.status;
    }, [email, PASSWORD] as const);
    expect(registered).toBe(200);

    await page.goto(authorizeUrl());
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await page.screenshot({ path: `${shotsDir}04-sign-in-choices.png`, fullPage: true });
    await page.focus("#passkey");
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.pathname === "/consent");
    await page.screenshot({ path: `${shotsDir}05-consent-after-passkey.png`, fullPage: true });
    await allowAndLand(page);
    expect(problems).toEqual([]);
  });

  it("signs in with a social provider: the page sends its oauth_query along, and the provider's callback resumes the authorize request", async () => {
    const sub = `social-${Date.now().toString(36)}`;
    oidc.setAccount({ sub, email: `${sub}@example.test`, email_verified: true, name: "Social User" });
    const { page, problems } = await openPage();
    await playProvider(page, { sub });
    // The callback itself sends the browser on to the consent page (not back to the sign-in page).
    const callbackLocations: string[] = [];
    page.on("response", (r) => {
      if (new URL(r.url()).pathname === "/api/auth/callback/oidc") callbackLocations.push(r.headers().location ?? "");
    });
    await page.goto(authorizeUrl());
    const button = page.locator("button[data-provider=oidc]");
    expect(await button.textContent()).toBe("Continue with oidc");
    await button.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.pathname === "/consent");
    await page.screenshot({ path: `${shotsDir}06-consent-after-social.png`, fullPage: true });
    expect(callbackLocations.map((l) => new URL(l).pathname)).toEqual(["/consent"]);
    await allowAndLand(page);
    expect(problems).toEqual([]);
  });

  it("a social sign-in that fails comes back to the page with a message, the request still resumable", async () => {
    const { page, problems } = await openPage();
    await playProvider(page, { deny: true });
    await page.goto(authorizeUrl());
    await page.click("button[data-provider=oidc]");
    await expect.poll(() => page.textContent("#status")).toMatch(/did not complete/);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    expect(new URL(page.url()).searchParams.get("sig")).toEqual(expect.any(String));
    expect(problems).toEqual([]);
  });
});
