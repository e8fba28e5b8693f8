import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEvent } from "../../src/db/entities/index.ts";
import { uuidv7 } from "../../src/core/ids.ts";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { DAY } from "../harness/clock.ts";
import { post } from "../harness/http.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../harness/admin-helpers.ts";
import type { TestServer } from "../harness/server.ts";
import { closeConsole, ensureConsole, openConsole, screenshots, seedUsers, signInConsole, startConsoleServer } from "./admin-console-helpers.ts";

/**
 * The console's first page, the dashboard (docs/admin-console.md "Dashboard"), in Chromium over
 * seeded data: 30 days of sign-ins and failures in the audit log, users, an admin action. The
 * figures show, the uPlot chart draws under the console's CSP (no CSP violation, no page error),
 * its figures are in a table too; screenshots light and dark (test-output/console/<dialect>/).
 */

let server: TestServer;
let browser: Browser;
let admin: SignedInUser;
const shots = screenshots("dashboard");

beforeAll(async () => {
  ensureConsole();
  server = await startConsoleServer();
  admin = await bootstrapAdmin(server);
  await seedUsers(server, 40);
  const user = await signUp(server, { name: "Dash User" });
  expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: "wrong-password-dash" })).status).toBe(401);
  // 30 days of sign-ins and failures, written as the service writes them
  const em = server.portcullis.app.orm.em.fork();
  const now = server.clock.now().getTime();
  const rows = [];
  for (let d = 1; d < 30; d++) {
    const signIns = 5 + ((d * 7) % 11);
    for (let i = 0; i < signIns; i++) rows.push({ action: "sign-in", metadata: { method: "email" }, at: now - d * DAY + i * 60_000 });
    for (let i = 0; i < d % 4; i++) rows.push({ action: "sign-in-failed", metadata: { method: "email", reason: i % 2 ? "BANNED_USER" : "INVALID_EMAIL_OR_PASSWORD" }, at: now - d * DAY + i * 90_000 });
  }
  await em.insertMany(
    AuditEvent,
    rows.map((r) => ({ id: uuidv7(), actorId: null, impersonatorId: null, action: r.action, targetType: "user", targetId: null, ip: "192.0.2.1", userAgent: "seed", metadata: JSON.stringify(r.metadata), createdAt: new Date(r.at) })),
  );
  expect((await post(`${server.auth}/admin/ban-user`, { userId: user.id, banReason: "dashboard seed" }, { bearer: admin.token })).status).toBe(200);
  if (hasChromium()) browser = await launchChromium();
}, 120_000);

afterAll(() => closeConsole(browser, server, shots, "dashboard"));

describe.runIf(hasChromium())("the dashboard", () => {
  for (const scheme of ["light", "dark"] as const) {
    it(`is the admin's first page: figures, the chart under the CSP, the table, recent actions, failure reasons (${scheme})`, async () => {
      const { page, problems } = await openConsole(browser, server);
      await page.emulateMedia({ colorScheme: scheme });
      await signInConsole(page, admin.email, PASSWORD);
      await page.getByRole("heading", { name: "Dashboard" }).waitFor();
      const figures = page.getByRole("list", { name: "Figures" });
      await expect.poll(() => figures.textContent()).toContain("active sessions");
      expect(await figures.textContent()).toContain("42 users");
      // uPlot drew: a canvas of the chart's size, its legend with the three series
      const chart = page.getByRole("img", { name: /Sign-ups, sign-ins and failed sign-ins per day/ });
      await chart.locator("canvas").waitFor();
      const box = await chart.locator("canvas").boundingBox();
      expect(box!.width).toBeGreaterThan(300);
      expect(await chart.textContent()).toContain("Failed sign-ins");
      const table = page.getByRole("table", { name: "The chart's figures per day" });
      expect(await table.locator("tbody tr").count()).toBeGreaterThanOrEqual(29);
      expect(await page.getByRole("region", { name: "Top failure reasons" }).textContent()).toContain("INVALID_EMAIL_OR_PASSWORD");
      expect(await page.getByRole("region", { name: "Recent admin actions" }).textContent()).toContain("ban-user");
      const background = await page.evaluate("getComputedStyle(document.documentElement).backgroundColor");
      expect(background).toBe(scheme === "dark" ? "rgb(22, 22, 22)" : "rgb(255, 255, 255)");
      await shots.shot(page, scheme);
      expect(problems).toEqual([]); // no CSP violation, no page error
      await page.context().close();
    }, 60_000);
  }
});
