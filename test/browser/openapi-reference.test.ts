import { mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/**
 * {base}/reference renders the generated document in a real browser with the
 * renderer served by us, under the page's CSP: no violation, no request to another origin.
 */
let server: TestServer;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium()) return;
  server = await startTestServer();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe.skipIf(!hasChromium())("API reference page in Chromium", () => {
  it("renders every tag of the document, with nothing blocked and nothing fetched elsewhere", async () => {
    const page = await (await browser.newContext()).newPage();
    const violations: string[] = [];
    const foreign: string[] = [];
    const origin = new URL(server.url).origin;
    page.on("console", (m) => {
      if (/Content Security Policy|Refused to/i.test(m.text())) violations.push(m.text());
    });
    page.on("request", (r) => {
      const url = new URL(r.url());
      if (url.protocol.startsWith("http") && url.origin !== origin) foreign.push(r.url());
    });
    await page.goto(`${server.auth}/reference`);
    const doc = (await (await fetch(`${server.auth}/openapi.json`)).json()) as { tags: { name: string }[]; info: { title: string } };
    // Scalar draws the title and a section per tag once it has loaded and parsed the document.
    await page.getByText(doc.info.title).first().waitFor({ timeout: 20_000 });
    for (const tag of doc.tags) await page.getByText(tag.name, { exact: true }).first().waitFor({ timeout: 10_000 });
    await expect(page.getByText("/sign-in/email").first().count()).resolves.toBeGreaterThan(0);
    const dir = fileURLToPath(new URL("../../test-output/reference/", import.meta.url));
    mkdirSync(dir, { recursive: true });
    await page.screenshot({ path: `${dir}reference.png` });
    expect(violations).toEqual([]);
    expect(foreign).toEqual([]);
  });
});
