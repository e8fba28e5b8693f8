import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorCode, createPortcullisClient } from "portcullis/client";
import { AUDIT_ACTIONS } from "../../src/core/audit-actions.ts";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { testDialect } from "../harness/database.ts";
import type { TestServer } from "../harness/server.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../harness/admin-helpers.ts";
import { clientAsPage, closeConsole, ensureConsole, openConsole, screenshots, seedUsers, signInConsole, startConsoleServer } from "./admin-console-helpers.ts";

/**
 * The admin console (/admin) in headless Chromium, as an admin uses it: sign in, find one user
 * among hundreds, ban them with a reason (the list then shows it), impersonate someone and stop,
 * read the audit entries, create a user; by keyboard alone; server refusals shown in words.
 * Everything the page does goes through the typed tRPC client with the session cookie.
 * Screenshots: test-output/console/<dialect>/.
 */
const SEEDED = 240;

let server: TestServer;
let browser: Browser;
let admin: SignedInUser;
let needle: SignedInUser;
let other: SignedInUser;
let page: Page;
let problems: string[];
const shots = screenshots("admin");

beforeAll(async () => {
  if (!hasChromium()) return;
  ensureConsole();
  server = await startConsoleServer();
  admin = await bootstrapAdmin(server);
  await seedUsers(server, SEEDED);
  needle = await signUp(server, { name: "Zelda Quartermaine", email: `zelda.quartermaine.${Date.now()}@example.test` });
  other = await signUp(server, { name: "Otto Other" });
  browser = await launchChromium();
  // The user list's address: an admin's first page at /admin is the dashboard (admin-dashboard.test.ts).
  ({ page, problems } = await openConsole(browser, server, "/admin/users"));
}, 120_000);

afterAll(() => closeConsole(browser, server, shots, "admin console"));

/** In the page: the focused element's label (inputs) or text (links, buttons). */
const FOCUSED_NAME = `(() => {
  const el = document.activeElement;
  const label = el && el.id ? document.querySelector('label[for="' + el.id + '"]') : null;
  return label ? label.textContent : el ? el.textContent : "";
})()`;

const row = (p: Page, email: string) => p.getByRole("row").filter({ has: p.getByRole("link", { name: email, exact: true }) });

describe.skipIf(!hasChromium() && !process.env.CI)(`admin console in Chromium (${testDialect})`, () => {
  it("signs in as an admin and lists the users, with their total", async () => {
    await shots.shot(page, "sign-in");
    await signInConsole(page, admin.email, PASSWORD);
    await page.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    await expect.poll(() => page.locator(".count").textContent()).toBe(`${SEEDED + 3} users match`);
    expect(await page.getByRole("table", { name: "Users" }).getByRole("row").count()).toBe(26); // header + 25
    await expect.poll(() => page.getByText(`1–25 of ${SEEDED + 3}`).isVisible()).toBe(true);
    await shots.shot(page, "users");
    // Paging: the next page starts at 26; the address keeps the state.
    await page.getByRole("button", { name: "Next" }).click();
    await expect.poll(() => page.getByText(`26–50 of ${SEEDED + 3}`).isVisible()).toBe(true);
    expect(page.url()).toContain("/admin/users?offset=25");
  });

  it("finds one user among many by searching, and opens them", async () => {
    await page.getByLabel("Search for").fill("quarterm");
    await page.getByLabel("Search for").press("Enter");
    await expect.poll(() => page.locator(".count").textContent()).toBe("1 user matches");
    await row(page, needle.email).waitFor();
    await shots.shot(page, "search");
    await page.getByRole("link", { name: needle.email }).click();
    await page.getByRole("heading", { name: needle.email, level: 1 }).waitFor();
    expect(await page.locator("dl.facts").textContent()).toContain("Active");
    // Its session (from sign-up) and its password account are listed.
    await expect.poll(() => page.getByRole("table", { name: "Live sessions, newest first" }).getByRole("row").count()).toBe(2);
    await page.getByRole("cell", { name: "Password (credential)" }).waitFor();
    await shots.shot(page, "user-detail");
  });

  it("bans the user with a reason and an expiry; the list shows the ban", async () => {
    await page.getByLabel("Reason").fill("Spamming the forum");
    await page.getByLabel("Ends").selectOption({ label: "7 days" });
    await page.getByRole("button", { name: "Ban user" }).click();
    await page.getByRole("status").filter({ hasText: `${needle.email} is banned.` }).waitFor();
    await page.getByRole("button", { name: "Unban user" }).waitFor();
    expect(await page.locator("dl.facts").textContent()).toMatch(/Banned until .* — reason: Spamming the forum/);
    // The ban ended the user's sessions.
    await page.getByText("No live sessions.").waitFor();
    await shots.shot(page, "banned");
    const stored = await server.portcullis.createCaller({ headers: { authorization: `Bearer ${admin.token}` } }).admin.getUser({ id: needle.id });
    expect(stored).toMatchObject({ banned: true, banReason: "Spamming the forum" });
    expect(new Date(stored.banExpires!).getTime() - server.clock.now().getTime()).toBe(7 * 86_400_000);

    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Users" }).click();
    await page.getByLabel("Filter by").selectOption("banned");
    await page.getByLabel("Banned", { exact: true }).selectOption("true");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => page.locator(".count").textContent()).toBe("1 user matches");
    expect(await row(page, needle.email).textContent()).toMatch(/Banned until .* — Spamming the forum/);
    await shots.shot(page, "banned-in-list");
  });

  it("shows a server refusal in words: an admin cannot ban themselves", async () => {
    await page.goto(`${server.url}/admin/users/${admin.id}`);
    await page.getByRole("heading", { name: admin.email, level: 1 }).waitFor();
    await page.getByRole("button", { name: "Ban user" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe("The server refused: You cannot ban yourself (YOU_CANNOT_BAN_YOURSELF, HTTP 400)");
    await shots.shot(page, "refused-in-words");
  });

  it("impersonates a user, then stops and is the admin again", async () => {
    await page.goto(`${server.url}/admin/users/${other.id}`);
    await page.getByRole("button", { name: `Impersonate ${other.email}` }).click();
    await page.getByRole("heading", { name: `Impersonating ${other.email}` }).waitFor();
    const as = await (await clientAsPage(page, server)).getSession.query();
    expect(as?.user.id).toBe(other.id);
    expect(as?.session.impersonatedBy).toBe(admin.id);
    await shots.shot(page, "impersonating");

    await page.getByRole("button", { name: "Stop impersonating" }).click();
    await page.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    const back = await (await clientAsPage(page, server)).getSession.query();
    expect(back?.user.id).toBe(admin.id);
    expect(back?.session.impersonatedBy).toBeNull();
    await shots.shot(page, "impersonation-stopped");
  });

  it("shows the audit entries: the ban with its reason, the impersonation, filtered by user and action", async () => {
    await page.getByRole("link", { name: "Audit log" }).click();
    await page.getByRole("heading", { name: "Audit log", level: 1 }).waitFor();
    // The action filter offers exactly the service's closed list, in its order.
    const offered = await Promise.all((await page.getByLabel("Action").locator("option").all()).map((option) => option.getAttribute("value")));
    expect(offered).toEqual(["", ...AUDIT_ACTIONS]);
    await page.getByLabel("User id (actor, impersonator or target)").fill(needle.id);
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => page.locator(".count").textContent()).toBe("1 event matches");
    const ban = page.getByRole("row").filter({ has: page.getByRole("rowheader", { name: "ban-user" }) });
    expect(await ban.textContent()).toContain("banReason: Spamming the forum");
    await shots.shot(page, "audit-ban");

    await page.getByRole("button", { name: "Clear filters" }).click();
    await page.getByLabel("Action").selectOption("impersonate-user");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => page.locator(".count").textContent()).toBe("1 event matches");
    // The page names the target by its id, linked to the user's page.
    await page.getByRole("link", { name: `${other.id.slice(0, 8)}…` }).waitFor();
    await shots.shot(page, "audit-impersonation");
    // And the user page lists the same trail.
    await page.goto(`${server.url}/admin/users/${other.id}`);
    const trail = page.getByRole("table", { name: "Events by or about this user, newest first" });
    await expect.poll(async () => (await trail.getByRole("rowheader").allTextContents()).join(",")).toBe("stop-impersonating,impersonate-user");
  });

  it("creates a user and lands on their page", async () => {
    await page.getByRole("link", { name: "Create user" }).click();
    const email = `made.here.${Date.now()}@example.test`;
    await page.getByLabel("Name").fill("Made Here");
    await page.getByLabel("Email", { exact: true }).fill(email);
    await page.getByLabel(/^Password/).fill("a long enough password");
    await page.getByLabel(/^Role/).fill("support");
    await page.getByRole("button", { name: "Create user" }).click();
    await page.getByRole("heading", { name: email, level: 1 }).waitFor();
    expect(await page.locator("dl.facts").textContent()).toContain("Rolesupport");
    await shots.shot(page, "created");
    expect(problems).toEqual([]);
  });

  it("lists a user's API keys by their first characters and revokes one: the key stops at once", async () => {
    const made = await server.portcullis.createApiKey({ userId: other.id, name: "deploy-bot", rateLimitEnabled: false });
    const keyWorks = async () => (await fetch(`${server.auth}/get-session`, { headers: { "x-api-key": made.key } })).status;
    expect(await keyWorks()).toBe(200);
    await page.goto(`${server.url}/admin/users/${other.id}`);
    const table = page.getByRole("table", { name: "API keys, newest first" });
    await table.getByRole("cell", { name: "deploy-bot", exact: true }).waitFor();
    expect(await table.textContent()).toContain(`${made.start}…`);
    expect(await page.content()).not.toContain(made.key);
    await shots.shot(page, "api-keys");
    await page.getByRole("button", { name: "Revoke API key deploy-bot" }).click();
    await page.getByRole("status").filter({ hasText: "API key deploy-bot revoked." }).waitFor();
    await page.getByText("No API keys.").waitFor();
    expect(await keyWorks()).toBe(401);
    expect(problems).toEqual([]);
  });

  it("works by keyboard alone: search, open, and read the user", async () => {
    const { page: kb, problems: kbProblems } = await openConsole(browser, server, "/admin/users");
    await signInConsole(kb, admin.email, PASSWORD);
    await kb.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    // The page's heading has focus; Tab walks the controls in document order.
    expect(await kb.evaluate("document.activeElement.tagName")).toBe("H1");
    const tabTo = async (accessibleName: string) => {
      for (let i = 0; i < 40; i++) {
        await kb.keyboard.press("Tab");
        const name = await kb.evaluate(FOCUSED_NAME);
        if (name === accessibleName) return;
      }
      throw new Error(`Tab never reached ${accessibleName}`);
    };
    await tabTo("Search for");
    await kb.keyboard.type("quarterm");
    await kb.keyboard.press("Enter");
    await expect.poll(() => kb.locator(".count").textContent()).toBe("1 user matches");
    await tabTo(needle.email);
    await kb.keyboard.press("Enter");
    await kb.getByRole("heading", { name: needle.email, level: 1 }).waitFor();
    expect(await kb.evaluate("document.activeElement.textContent")).toBe(needle.email);
    await shots.shot(kb, "keyboard");
    expect(kbProblems).toEqual([]);
    await kb.context().close();
  });

  it("the server refuses what the page would not offer: a banned user's session is gone", async () => {
    const gone = await createPortcullisClient({ url: server.url, token: needle.token }).getSession.query();
    expect(gone).toBeNull();
    const client = await clientAsPage(page, server);
    try {
      await client.admin.banUser.mutate({ userId: admin.id });
      throw new Error("banning oneself succeeded");
    } catch (err) {
      expect(authErrorCode(err)).toBe("YOU_CANNOT_BAN_YOURSELF");
    }
  });
});
