import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { testDialect } from "../harness/database.ts";
import type { TestServer } from "../harness/server.ts";
import { bootstrapAdmin, PASSWORD, type SignedInUser } from "../harness/admin-helpers.ts";
import { authorizeToCallback, authorizeUrl, pkce, REDIRECT, signUp, tokenRequest } from "../integration/oidc-provider/helpers.ts";
import { closeConsole, ensureConsole, openConsole, screenshots, signInConsole, startConsoleServer } from "./admin-console-helpers.ts";

/**
 * The console's OAuth clients page (docs/admin-console.md, docs/oidc-provider.md) in headless
 * Chromium: create a client (its secret shown once), edit it, rotate the secret (the old one
 * stops working against the real token endpoint), see who allowed it, delete it. The support
 * role, without `oauthClient`, has no link to it.
 */
let server: TestServer;
let browser: Browser;
let admin: SignedInUser;
let page: Page;
let problems: string[];
const shots = screenshots("clients");

beforeAll(async () => {
  if (!hasChromium()) return;
  ensureConsole();
  server = await startConsoleServer();
  admin = await bootstrapAdmin(server);
  browser = await launchChromium();
  ({ page, problems } = await openConsole(browser, server));
}, 120_000);

afterAll(() => closeConsole(browser, server, shots, "clients"));

describe.skipIf(!hasChromium() && !process.env.CI)(`admin console: OAuth clients in Chromium (${testDialect})`, () => {
  it("creates a client (secret once), edits it, rotates its secret, shows its consents, deletes it", async () => {
    await signInConsole(page, admin.email, PASSWORD);
    await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor();
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "OAuth clients" }).click();
    await page.getByRole("heading", { name: "OAuth clients", level: 1 }).waitFor();

    await page.getByLabel("Name").fill("Grafana");
    await page.getByLabel("Redirect URIs (one a line)").fill(REDIRECT);
    await page.getByRole("button", { name: "Create client" }).click();
    const secretBox = page.getByRole("status", { name: "New client secret" });
    await secretBox.waitFor();
    const firstSecret = (await page.locator("#client-secret").textContent())!;
    const clientId = (await secretBox.locator("code").first().textContent())!;
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Grafana", exact: true }) });
    await expect.poll(() => row.textContent()).toContain("Confidential");
    await shots.shot(page, "created");

    // A user allows it and gets a refresh token, with the secret the console showed.
    const user = await signUp(server);
    const p = pkce();
    const callback = await authorizeToCallback(server, user, authorizeUrl(server, { response_type: "code", client_id: clientId, redirect_uri: REDIRECT, scope: "openid offline_access", code_challenge: p.challenge, code_challenge_method: "S256" }));
    const tokens = await tokenRequest(server, { grant_type: "authorization_code", code: callback.searchParams.get("code")!, code_verifier: p.verifier, redirect_uri: REDIRECT }, { clientId, clientSecret: firstSecret });
    expect(tokens.status, tokens.text).toBe(200);

    await page.getByRole("link", { name: "Grafana", exact: true }).click();
    await page.getByRole("heading", { name: "Grafana", level: 1 }).waitFor();
    const consents = page.getByRole("table", { name: "Users who allowed this client, newest first" });
    await expect.poll(() => consents.textContent()).toContain(user.email);

    await page.getByLabel("Name").fill("Grafana Cloud");
    await page.getByLabel("Trusted: skip the consent page").check();
    await page.getByRole("button", { name: "Save client" }).click();
    await page.getByRole("heading", { name: "Grafana Cloud", level: 1 }).waitFor();

    await page.getByRole("button", { name: "Rotate secret" }).click();
    await page.getByRole("status", { name: "New client secret" }).waitFor();
    const secondSecret = (await page.locator("#client-secret").textContent())!;
    expect(secondSecret).not.toBe(firstSecret);
    await shots.shot(page, "rotated");
    const refresh = (secret: string) => tokenRequest(server, { grant_type: "refresh_token", refresh_token: tokens.body.refresh_token }, { clientId, clientSecret: secret });
    expect((await refresh(firstSecret)).status).toBe(401);
    const refreshed = await refresh(secondSecret);
    expect(refreshed.status, refreshed.text).toBe(200);

    page.once("dialog", (d) => void d.accept());
    await page.getByRole("button", { name: "Delete client" }).click();
    await page.getByRole("heading", { name: "OAuth clients", level: 1 }).waitFor();
    await expect.poll(() => page.getByRole("link", { name: "Grafana Cloud", exact: true }).count()).toBe(0);
    await shots.shot(page, "deleted");
    expect((await tokenRequest(server, { grant_type: "refresh_token", refresh_token: refreshed.body.refresh_token }, { clientId, clientSecret: secondSecret })).status).toBe(401);
    expect(problems).toEqual([]);
  });
});
