import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { get, post, uniqueEmail } from "../harness/http.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { linkFrom, startSmtpSink, type SmtpSink } from "../harness/smtp.ts";

/**
 * A magic link in a real browser (Debian's `chromium`, driven by playwright-core), mailed over
 * real SMTP: the link opens the confirm page, its button signs in, and the browser lands on the
 * app's callback page signed in. The app is a second server on another port of the same host, a
 * trusted origin; cookies are per host, so it reads the session cookie and asks get-session.
 */
let sink: SmtpSink;
let server: TestServer;
let app: Server;
let appOrigin: string;
let browser: Browser;

beforeAll(async () => {
  if (!hasChromium()) return;
  app = createServer((req, res) => {
    void (async () => {
      const session = await get(`${server.auth}/get-session`, { headers: { cookie: req.headers.cookie ?? "" } });
      const who = session.body?.user?.email ?? "nobody";
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(`<!doctype html><title>App</title><h1>Signed in as ${who}</h1><p id="path">${req.url}</p>`);
    })();
  });
  await new Promise<void>((resolve) => app.listen(0, "127.0.0.1", resolve));
  appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, trustedOrigins: [appOrigin] }, { ownOrigin: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await sink?.close();
  await new Promise((resolve) => app?.close(resolve));
});

describe.skipIf(!hasChromium() && !process.env.CI)("magic link in a browser (headless Chromium)", () => {
  it("the mailed link opens the confirm page (not signed in yet); its button signs in and lands on the callback page", async () => {
    const email = uniqueEmail("ml-browser");
    const asked = await post(`${server.auth}/sign-in/magic-link`, { email, name: "Browser", callbackURL: `${appOrigin}/welcome` });
    expect(asked.body).toEqual({ status: true });
    const link = linkFrom(await sink.waitFor((m) => m.to.includes(email)), "/magic-link/verify");

    const context = await browser.newContext();
    const page = await context.newPage();
    const problems: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") problems.push(m.text());
    });
    page.on("pageerror", (e) => problems.push(e.message));

    await page.goto(link);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect(await page.getByText(email).isVisible()).toBe(true);
    expect((await context.cookies()).filter((c) => c.name.endsWith("session_token"))).toEqual([]);

    // The form's POST carries this page's Origin (its referrer policy is same-origin: under no-referrer
    // Chromium sends `Origin: null`, which the login CSRF check refuses), and the CSP lets the 302 go to the app.
    await Promise.all([page.waitForURL(`${appOrigin}/welcome`), page.getByRole("button", { name: "Sign in" }).click()]);
    expect(await page.locator("h1").textContent()).toBe(`Signed in as ${email}`);
    expect((await context.cookies()).some((c) => c.name === "portcullis.session_token")).toBe(true);

    // The link is used up: opened again, it sends the browser back to the app with the error.
    await page.goto(link);
    await page.waitForURL(`${appOrigin}/welcome?error=INVALID_TOKEN`);
    expect(problems).toEqual([]);
    await context.close();
  });

  it("with JavaScript off, the confirm page's plain form still signs in and lands on the callback page", async () => {
    const email = uniqueEmail("ml-nojs");
    expect((await post(`${server.auth}/sign-in/magic-link`, { email, callbackURL: `${appOrigin}/no-js` })).body).toEqual({ status: true });
    const link = linkFrom(await sink.waitFor((m) => m.to.includes(email)), "/magic-link/verify");
    const context = await browser.newContext({ javaScriptEnabled: false });
    const page = await context.newPage();
    await page.goto(link);
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    expect((await context.cookies()).filter((c) => c.name.endsWith("session_token"))).toEqual([]);
    await Promise.all([page.waitForURL(`${appOrigin}/no-js`), page.getByRole("button", { name: "Sign in" }).click()]);
    expect(await page.locator("h1").textContent()).toBe(`Signed in as ${email}`);
    await context.close();
  });
});
