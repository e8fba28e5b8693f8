import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { oidcShotsDir, openPage as openPageIn, pageAuthorizeUrl, registerPageClient, RP_REDIRECT } from "./oidc-page-helpers.ts";
import { post, uniqueEmail } from "../harness/http.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { SECOND } from "../harness/clock.ts";
import { totpCode } from "../../src/modules/two-factor/totp.ts";

/**
 * The OpenID provider's sign-in and consent pages in a real browser (Debian's chromium via
 * playwright-core): keyboard only, under their CSP (no violation), screenshots in
 * test-output/oidc/. The relying party's callback is intercepted: only its URL matters.
 */
const REDIRECT = RP_REDIRECT;
const PASSWORD = "password123";
let shotsDir: string;

let server: TestServer;
let browser: Browser;
let clientId: string;

beforeAll(async () => {
  if (!hasChromium()) return;
  shotsDir = oidcShotsDir();
  server = await startTestServer({}, { ownOrigin: true });
  clientId = await registerPageClient(server);
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const openPage = () => openPageIn(browser);
const authorizeUrl = () => pageAuthorizeUrl(server.auth, clientId);

describe.skipIf(!hasChromium() && !process.env.CI)("the authorization pages (headless Chromium)", () => {
  it("sign in, allow with the keyboard, and land on the client with a code, state and iss", async () => {
    const email = uniqueEmail("oidc-page");
    expect((await post(`${server.auth}/sign-up/email`, { name: "Page", email, password: PASSWORD })).status).toBe(200);
    const { page, problems } = await openPage();
    await page.goto(authorizeUrl());
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await page.screenshot({ path: `${shotsDir}01-sign-in.png`, fullPage: true });
    await page.keyboard.type(email);
    await page.keyboard.press("Tab");
    await page.keyboard.type(PASSWORD);
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.pathname === "/consent");
    await expect.poll(() => page.textContent("#client-name")).toBe("Grafana");
    expect(await page.locator("#scopes li").allTextContents()).toEqual(["Know who you are", "See your email address"]);
    await page.screenshot({ path: `${shotsDir}02-consent.png`, fullPage: true });
    await page.focus("#allow");
    await page.keyboard.press("Enter");
    await page.waitForURL((u) => u.origin === "https://rp.example.test");
    const back = new URL(page.url());
    expect(back.searchParams.get("code")).toEqual(expect.any(String));
    expect(back.searchParams.get("state")).toBe("xyz");
    expect(back.searchParams.get("iss")).toBe(server.auth);
    expect(problems).toEqual([]);
  });

  it("deny sends access_denied; a wrong password stays on the page with a message", async () => {
    const email = uniqueEmail("oidc-deny");
    expect((await post(`${server.auth}/sign-up/email`, { name: "Deny", email, password: PASSWORD })).status).toBe(200);
    const { page, problems } = await openPage();
    await page.goto(`${authorizeUrl()}&login_hint=${encodeURIComponent(email)}`);
    expect(await page.inputValue("#email")).toBe(email);
    await page.fill("#password", "wrong-password");
    await page.click("button[type=submit]");
    await expect.poll(() => page.textContent("#status")).not.toBe("");
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await page.fill("#password", PASSWORD);
    await page.click("button[type=submit]");
    await page.waitForURL((u) => u.pathname === "/consent");
    await page.click("#deny");
    await page.waitForURL((u) => u.origin === "https://rp.example.test");
    expect(new URL(page.url()).searchParams.get("error")).toBe("access_denied");
    expect(problems.filter((p) => !p.includes("401"))).toEqual([]);
  });

  it("a user with two-factor on gives the code (or a backup code) on the page and the flow completes", async () => {
    const email = uniqueEmail("oidc-2fa");
    const signedUp = await post(`${server.auth}/sign-up/email`, { name: "Second", email, password: PASSWORD });
    const bearer = signedUp.body.token as string;
    const enabled = await post(`${server.auth}/two-factor/enable`, { password: PASSWORD }, { bearer });
    expect(enabled.status, enabled.text).toBe(200);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    const backupCode = (enabled.body.backupCodes as string[])[0]!;
    server.clock.advance(30 * SECOND);
    expect((await post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()) }, { bearer })).status).toBe(200);
    server.clock.advance(30 * SECOND);

    const { page, problems } = await openPage();
    await page.goto(authorizeUrl());
    await page.fill("#email", email);
    await page.fill("#password", PASSWORD);
    await page.press("#password", "Enter");
    await page.locator("#code").waitFor();
    expect(await page.isVisible("#sign-in-form")).toBe(false);
    expect(await page.evaluate("document.activeElement.id")).toBe("code");
    await page.screenshot({ path: `${shotsDir}03-two-factor.png`, fullPage: true });
    await page.fill("#code", "000000" === totpCode(secret, server.clock.now().getTime()) ? "111111" : "000000");
    await page.press("#code", "Enter");
    await expect.poll(() => page.textContent("#status")).toMatch(/\S/);
    expect(new URL(page.url()).pathname).toBe("/sign-in");
    await page.fill("#code", totpCode(secret, server.clock.now().getTime()));
    await page.press("#code", "Enter");
    await page.waitForURL((u) => u.pathname === "/consent");
    await expect.poll(() => page.textContent("#client-name")).toBe("Grafana");
    await page.click("#allow");
    await page.waitForURL((u) => u.origin === "https://rp.example.test");
    expect(new URL(page.url()).searchParams.get("code")).toEqual(expect.any(String));
    expect(problems.filter((p) => !p.includes("401"))).toEqual([]);

    // A backup code instead, in a fresh browser (the client is allowed now: straight back to it).
    const second = await openPage();
    await second.page.goto(authorizeUrl());
    await second.page.fill("#email", email);
    await second.page.fill("#password", PASSWORD);
    await second.page.press("#password", "Enter");
    await second.page.locator("#code").waitFor();
    await second.page.fill("#code", backupCode);
    await second.page.press("#code", "Enter");
    await second.page.waitForURL((u) => u.origin === "https://rp.example.test");
    expect(new URL(second.page.url()).searchParams.get("code")).toEqual(expect.any(String));
    expect(second.problems).toEqual([]);
  });
});
