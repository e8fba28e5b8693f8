import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { cookieFrom, get, post } from "../harness/http.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { oidcShotsDir } from "./oidc-page-helpers.ts";
import { authorizeToCallback, authorizeUrl, pkce, REDIRECT, registerClient, signUp, tokenRequest } from "../integration/oidc-provider/helpers.ts";

/**
 * The account page in a real browser: without a session it goes to the sign-in page and back;
 * it lists the applications the user allowed and their sessions; revoking an application ends
 * its refresh token, revoking a session ends that session. Keyboard only, under its CSP (no
 * violation); screenshots in test-output/oidc/.
 */
const PASSWORD = "password123";
let shotsDir: string;

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium()) return;
  shotsDir = oidcShotsDir();
  server = await startTestServer({}, { ownOrigin: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe.skipIf(!hasChromium() && !process.env.CI)("the account page (headless Chromium)", () => {
  it("is locked down like the other pages", async () => {
    const res = await get(`${server.url}/account`, { headers: { accept: "text/html" } });
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy")!;
    expect(csp).toMatch(/script-src 'nonce-[^']+'; style-src 'nonce-[^']+'/);
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("cache-control")).toBe("no-store");
  });

  it("signs in and comes back, lists the app and sessions; revoking the app ends its refresh token, revoking a session ends it", async () => {
    const client = await registerClient(server, { name: "Grafana" });
    const user = await signUp(server, PASSWORD);
    const p = pkce();
    const callback = await authorizeToCallback(server, user, authorizeUrl(server, { response_type: "code", client_id: client.clientId, redirect_uri: REDIRECT, scope: "openid offline_access", code_challenge: p.challenge, code_challenge_method: "S256" }));
    const tokens = await tokenRequest(server, { grant_type: "authorization_code", code: callback.searchParams.get("code")!, code_verifier: p.verifier, redirect_uri: REDIRECT }, client);
    expect(tokens.status, tokens.text).toBe(200);
    const otherSession = cookieFrom((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }, { headers: { "user-agent": "Other Laptop" } })).headers)!;

    const page = await (await browser.newContext()).newPage();
    const problems: string[] = [];
    page.on("pageerror", (e) => problems.push(String(e)));
    page.on("console", (m) => m.type() === "error" && problems.push(m.text()));
    await page.goto(`${server.url}/account`);
    await page.waitForURL((u) => u.pathname === "/sign-in");
    expect(new URL(page.url()).searchParams.get("next")).toBe("/account");
    await page.keyboard.type(user.email);
    await page.keyboard.press("Tab");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.pathname === "/account");
    await expect.poll(() => page.locator("#apps li").count()).toBe(1);
    const app = page.locator("#apps li");
    expect(await app.locator("strong").textContent()).toBe("Grafana");
    expect(await app.textContent()).toContain("Can: openid, offline_access");
    expect(await page.locator("#sessions li").count()).toBe(3);
    expect(await page.locator("#sessions li", { hasText: "(this browser)" }).locator("button").count()).toBe(0);
    await page.screenshot({ path: `${shotsDir}07-account.png`, fullPage: true });

    // Keyboard: Tab to the app's Revoke button.
    for (let i = 0; i < 10 && (await page.evaluate("document.activeElement.getAttribute('aria-label')")) !== "Revoke Grafana"; i++) await page.keyboard.press("Tab");
    await page.keyboard.press("Enter");
    await expect.poll(() => page.locator("#apps li").count()).toBe(0);
    expect(await page.isVisible("#no-apps")).toBe(true);
    expect(await page.textContent("#status")).toBe("Revoked Grafana.");
    const refreshed = await tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token }, client);
    expect(refreshed.body.error).toBe("invalid_grant");

    await page.click("button[aria-label='Revoke session on Other Laptop']");
    await expect.poll(() => page.locator("#sessions li").count()).toBe(2);
    expect((await get(`${server.auth}/get-session`, { headers: { cookie: otherSession } })).body).toBeNull();
    await page.screenshot({ path: `${shotsDir}08-account-revoked.png`, fullPage: true });
    expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
  });
});
