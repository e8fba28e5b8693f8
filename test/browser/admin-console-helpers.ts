import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { expect } from "vitest";
import { createPortcullisClient, type PortcullisClient } from "portcullis/client";
import { User } from "../../src/db/entities/index.ts";
import { newUserRow } from "../../src/core/session/view.ts";
// @ts-expect-error plain ESM script without types
import { ensureConsoleBuilt } from "../../scripts/build-console.mjs";
import { testDialect } from "../harness/database.ts";
import type { PortcullisConfig } from "../../src/index.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/** A role that may look but not act (the console hides every action it lacks). */
export const SUPPORT_ROLE: { user: ("list" | "get")[]; session: "list"[]; audit: "list"[] } = { user: ["list", "get"], session: ["list"], audit: ["list"] };

/** dist/console up to date (global setup builds it too; this covers running one file alone). */
export function ensureConsole(): void {
  (ensureConsoleBuilt as () => void)();
}

/** A service on its own origin (the page's calls pass the CSRF origin check), with the support role. */
export function startConsoleServer(config: PortcullisConfig = {}): Promise<TestServer> {
  return startTestServer({ admin: { roles: { support: { ...SUPPORT_ROLE } } }, ...config }, { ownOrigin: true });
}

/**
 * `count` users straight into the table, in batches (no password: they only need to be listed):
 * roles, verification and creation times vary, so filters and sorts have something to do.
 */
export async function seedUsers(server: TestServer, count: number): Promise<void> {
  const em = server.portcullis.app.orm.em.fork();
  const start = server.clock.now().getTime() - count * 60_000;
  for (let from = 0; from < count; from += 200) {
    const rows = [];
    for (let i = from; i < Math.min(count, from + 200); i++) {
      const row = newUserRow(
        {
          email: `seed${String(i).padStart(4, "0")}@example.test`,
          name: `Seeded Person ${i}`,
          image: null,
          username: null,
          displayUsername: null,
          role: i % 50 === 0 ? "admin" : "user",
          emailVerified: i % 3 === 0,
        },
        new Date(start + i * 60_000),
      );
      rows.push(row);
    }
    await em.insertMany(User, rows);
  }
}

/** Screenshots of each step: test-output/console/<dialect>/<prefix>-NN-step.png (test-output/ is gitignored). */
export function screenshots(prefix: string) {
  const dir = fileURLToPath(new URL(`../../test-output/console/${testDialect}/`, import.meta.url));
  mkdirSync(dir, { recursive: true });
  const saved: string[] = [];
  return {
    saved,
    async shot(page: Page, name: string): Promise<void> {
      const path = `${dir}${prefix}-${String(saved.length + 1).padStart(2, "0")}-${name}.png`;
      await page.screenshot({ path, fullPage: true });
      saved.push(path);
    },
  };
}

/**
 * A fresh browser profile on the console. `problems` collects page errors and console errors
 * (a CSP violation is one) but not the "Failed to load resource" line Chromium prints for every
 * 4xx answer: refusals are part of these tests.
 */
export async function openConsole(browser: Browser, server: TestServer, path = "/admin") {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error" && !m.text().startsWith("Failed to load resource")) problems.push(m.text());
  });
  page.on("pageerror", (e) => problems.push(e.message));
  await page.goto(`${server.url}${path}`);
  return { page, problems };
}

export async function signInConsole(page: Page, email: string, password: string): Promise<void> {
  await page.getByRole("heading", { name: "Sign in" }).waitFor();
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** The typed client with the browser's own cookies (and its origin): what the console's calls carry. */
export async function clientAsPage(page: Page, server: TestServer): Promise<PortcullisClient> {
  const cookies = await page.context().cookies(server.url);
  const cookie = cookies.map((c) => `${c.name}=${c.value}`).join("; ");
  expect(cookie).toContain("session_token=");
  return createPortcullisClient({ url: server.url, cookie, origin: server.url });
}

/** A console test file's end: the browser and the server closed, the screenshots it took listed. */
export async function closeConsole(browser: Browser | undefined, server: TestServer | undefined, shots: ReturnType<typeof screenshots>, label: string): Promise<void> {
  await browser?.close();
  await server?.close();
  if (shots.saved.length) console.info(`${label} screenshots (${testDialect}):\n  ${shots.saved.join("\n  ")}`);
}
