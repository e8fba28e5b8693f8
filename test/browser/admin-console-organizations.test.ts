import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { testDialect } from "../harness/database.ts";
import { post } from "../harness/http.ts";
import type { TestServer } from "../harness/server.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../harness/admin-helpers.ts";
import { closeConsole, ensureConsole, openConsole, screenshots, signInConsole, startConsoleServer } from "./admin-console-helpers.ts";

/**
 * The console's organizations (docs/organizations.md, docs/admin-console.md) in headless
 * Chromium: the organizations page with member counts, one organization's members and pending
 * invitations, and a user's organizations on their page.
 */
let server: TestServer;
let browser: Browser;
let admin: SignedInUser;
let owner: SignedInUser;
let member: SignedInUser;
let page: Page;
let problems: string[];
let orgId: string;
const invited = `invited.${Date.now()}@example.test`;
const shots = screenshots("organizations");

beforeAll(async () => {
  if (!hasChromium()) return;
  ensureConsole();
  server = await startConsoleServer();
  admin = await bootstrapAdmin(server);
  owner = await signUp(server, { name: "Olga Owner" });
  member = await signUp(server, { name: "Max Member" });
  const created = await post(`${server.auth}/organization/create`, { name: "Globex", slug: `globex-${Date.now()}` }, { bearer: owner.token });
  expect(created.status, created.text).toBe(200);
  orgId = created.body.id;
  expect((await post(`${server.auth}/organization/add-member`, { userId: member.id, organizationId: orgId, role: "admin" }, { bearer: admin.token })).status).toBe(200);
  expect((await post(`${server.auth}/organization/invite-member`, { email: invited, role: "member", organizationId: orgId }, { bearer: owner.token })).status).toBe(200);
  browser = await launchChromium();
  ({ page, problems } = await openConsole(browser, server));
}, 120_000);

afterAll(() => closeConsole(browser, server, shots, "organizations"));

describe.skipIf(!hasChromium() && !process.env.CI)(`admin console: organizations in Chromium (${testDialect})`, () => {
  it("lists the organizations with their member counts, and opens one: members and pending invitations", async () => {
    await signInConsole(page, admin.email, PASSWORD);
    await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor(); // the console's first page
    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Organizations" }).click();
    await page.getByRole("heading", { name: "Organizations", level: 1 }).waitFor();
    const row = page.getByRole("row").filter({ has: page.getByRole("link", { name: "Globex", exact: true }) });
    await expect.poll(() => row.textContent()).toContain("2");
    await shots.shot(page, "list");
    await page.getByRole("link", { name: "Globex", exact: true }).click();
    await page.getByRole("heading", { name: "Globex", level: 1 }).waitFor();
    const members = page.getByRole("table", { name: "Members, oldest first (the first 100)" });
    await expect.poll(() => members.getByRole("row").count()).toBe(3);
    expect(await members.textContent()).toContain(owner.email);
    expect(await members.textContent()).toContain("owner");
    const invitations = page.getByRole("table", { name: "Pending invitations" });
    await expect.poll(() => invitations.textContent()).toContain(invited);
    await shots.shot(page, "detail");
  });

  it("a user's page shows their organizations with the role in each", async () => {
    await page.getByRole("link", { name: member.email }).click();
    await page.getByRole("heading", { name: member.email, level: 1 }).waitFor();
    const orgs = page.getByRole("table", { name: "Organizations of this user" });
    await expect.poll(() => orgs.textContent()).toContain("Globex");
    expect(await orgs.textContent()).toContain("admin");
    await shots.shot(page, "user");
    expect(problems).toEqual([]);
  });
});
