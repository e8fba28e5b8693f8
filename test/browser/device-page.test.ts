import { type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { post, request, uniqueEmail } from "../harness/http.ts";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/**
 * The verification page in a real browser (Debian's `chromium`, driven by playwright-core). The
 * server's publicUrl is its own URL, so the page's requests pass the CSRF origin check.
 * CI installs chromium (.ci/run); elsewhere the file is skipped when it is missing.
 */
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const PASSWORD = "password123";

let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium()) return;
  server = await startTestServer({}, { ownOrigin: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

function form(url: string, params: Record<string, string>) {
  return request("POST", url, { raw: new URLSearchParams(params).toString(), headers: { "content-type": "application/x-www-form-urlencoded" } });
}

async function device() {
  const res = await form(`${server.auth}/device/code`, { client_id: "tv-app" });
  expect(res.status).toBe(200);
  return res.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string };
}

const poll = (deviceCode: string) => form(`${server.auth}/device/token`, { grant_type: GRANT, device_code: deviceCode, client_id: "tv-app" });

async function newUser() {
  const email = uniqueEmail("browser");
  expect((await post(`${server.auth}/sign-up/email`, { name: "Browser", email, password: PASSWORD })).status).toBe(200);
  return email;
}

/** A fresh browser profile; any CSP violation or page error is collected. */
async function openPage(): Promise<{ page: Page; problems: string[] }> {
  const context = await browser.newContext();
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  return { page, problems };
}

async function signIn(page: Page, email: string) {
  await expect.poll(() => page.getByRole("heading", { name: "Sign in" }).isVisible()).toBe(true);
  expect(await page.getByRole("link", { name: "Sign in" }).isVisible()).toBe(true);
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
}

describe.skipIf(!hasChromium() && !process.env.CI)("device verification page (headless Chromium)", () => {
  it("signs in, enters the code, approves; the device's next poll gets its token", async () => {
    const code = await device();
    const email = await newUser();
    const { page, problems } = await openPage();
    await page.goto(code.verification_uri);
    await signIn(page, email);

    await page.getByRole("heading", { name: "Enter the code" }).waitFor();
    expect(await page.locator("#who").textContent()).toBe(email);
    await page.getByLabel("Code").fill(code.user_code.replace("-", "").toLowerCase());
    await page.getByRole("button", { name: "Continue" }).click();

    await page.getByRole("heading", { name: "Allow this device?" }).waitFor();
    expect(await page.locator("#confirm-code").textContent()).toBe(code.user_code);
    const before = await poll(code.device_code);
    expect(before.body.error).toBe("authorization_pending");
    await page.getByRole("button", { name: "Approve" }).click();
    await page.getByText("Device connected").waitFor();

    server.clock.advance(5000);
    const token = await poll(code.device_code);
    expect(token.status).toBe(200);
    expect(token.body.token_type).toBe("Bearer");
    const session = await request("GET", `${server.auth}/get-session`, { bearer: token.body.access_token });
    expect(session.body.user.email).toBe(email);
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("opens verification_uri_complete with the code filled in, and can deny", async () => {
    const code = await device();
    const email = await newUser();
    const { page, problems } = await openPage();
    await page.goto(code.verification_uri_complete);
    await signIn(page, email);
    await page.getByRole("heading", { name: "Allow this device?" }).waitFor();
    expect(await page.locator("#confirm-code").textContent()).toBe(code.user_code);
    await page.getByRole("button", { name: "Deny" }).click();
    await page.getByText("Request denied").waitFor();
    const res = await poll(code.device_code);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe("access_denied");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("says so when the code is unknown", async () => {
    const email = await newUser();
    const { page } = await openPage();
    await page.goto(`${server.url}/device?user_code=ZZZZ-ZZZZ`);
    await signIn(page, email);
    await page.getByRole("heading", { name: "Enter the code" }).waitFor();
    await expect.poll(() => page.getByRole("status").textContent()).toBe("Invalid user code");
    await page.context().close();
  });
});
