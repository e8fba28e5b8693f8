import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { post, uniqueEmail } from "../harness/http.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/**
 * A browser app on another origin calls the service with credentials. Two tiny
 * page servers on other loopback ports: one listed in `trustedOrigins`, one not. 127.0.0.1 on
 * two ports is cross-origin but same-site, as app.example.com and auth.example.com are, so the
 * SameSite=Lax session cookie goes along with credentialed fetches.
 */

let trustedPages: Server;
let untrustedPages: Server;
let appOrigin: string;
let evilOrigin: string;
let server: TestServer;
let browser: Browser;

/** An origin serving one empty HTML page; the test's fetches run in it. */
async function pageServer(): Promise<{ server: Server; origin: string }> {
  const s = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end("<!doctype html><title>app</title><p>app</p>");
  });
  await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
  return { server: s, origin: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  if (!hasChromium()) return;
  ({ server: trustedPages, origin: appOrigin } = await pageServer());
  ({ server: untrustedPages, origin: evilOrigin } = await pageServer());
  server = await startTestServer({ trustedOrigins: [appOrigin] }, { ownOrigin: true });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
  await new Promise((r) => trustedPages?.close(r));
  await new Promise((r) => untrustedPages?.close(r));
});

async function openAt(origin: string): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${origin}/`);
  return page;
}

interface Answer {
  ok: true;
  status: number;
  body: any;
  /** Readable only because the service exposes it (Access-Control-Expose-Headers). */
  token: string | null;
}
type Outcome = Answer | { ok: false; error: string };

/** fetch() from inside the page (its origin is the caller's); a blocked request resolves to its TypeError's text. */
function pageFetch(page: Page, url: string, init: { method?: string; json?: unknown; bearer?: string; credentials?: "include" | "omit" } = {}): Promise<Outcome> {
  return page.evaluate(
    async ({ url, init }) => {
      const headers: Record<string, string> = {};
      if (init.json !== undefined) headers["content-type"] = "application/json";
      if (init.bearer) headers.authorization = `Bearer ${init.bearer}`;
      try {
        const res = await fetch(url, {
          method: init.method ?? "GET",
          headers,
          credentials: init.credentials ?? "include",
          ...(init.json !== undefined ? { body: JSON.stringify(init.json) } : {}),
        });
        const text = await res.text();
        return { ok: true as const, status: res.status, body: text ? JSON.parse(text) : null, token: res.headers.get("set-auth-token") };
      } catch (err) {
        return { ok: false as const, error: String(err) };
      }
    },
    { url, init },
  );
}

function answered(outcome: Outcome): Answer {
  if (!outcome.ok) throw new Error(`the browser blocked the request: ${outcome.error}`);
  return outcome;
}

describe.skipIf(!hasChromium() && !process.env.CI)("CORS from a page on another origin (headless Chromium)", () => {
  it("a trusted origin signs up, reads set-auth-token, and keeps a cookie session across origins (REST and tRPC)", async () => {
    const page = await openAt(appOrigin);
    const email = uniqueEmail("cors-page");
    const password = "cors-page-password-1";

    const up = answered(await pageFetch(page, `${server.auth}/sign-up/email`, { method: "POST", json: { name: "Cors Page", email, password } }));
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.token).toBe(up.body.token); // exposed: the page reads the header

    const session = answered(await pageFetch(page, `${server.auth}/get-session`));
    expect(session.body?.user.email).toBe(email); // the cookie set by the service came back with the fetch

    const trpc = answered(await pageFetch(page, `${server.url}/api/trpc/getSession`));
    expect(trpc.body.result.data.user.email).toBe(email);

    // Bearer from the page, no cookie: the preflight allows Authorization.
    const bearer = answered(await pageFetch(page, `${server.auth}/get-session`, { bearer: up.token!, credentials: "omit" }));
    expect(bearer.body?.user.email).toBe(email);

    // A cookie-carrying mutation passes the CSRF origin check from the trusted origin.
    const out = answered(await pageFetch(page, `${server.auth}/sign-out`, { method: "POST", json: {} }));
    expect(out.status, JSON.stringify(out.body)).toBe(200);
    expect(answered(await pageFetch(page, `${server.auth}/get-session`)).body).toBeNull();

    const again = answered(await pageFetch(page, `${server.url}/api/trpc/signIn.email`, { method: "POST", json: { email, password } }));
    expect(again.status, JSON.stringify(again.body)).toBe(200);
    expect(again.token).toBe(again.body.result.data.token);
    expect(answered(await pageFetch(page, `${server.auth}/get-session`)).body?.user.email).toBe(email);
  });

  it("an untrusted origin is blocked: its preflighted sign-up never reaches the service, and it cannot read a session", async () => {
    const email = uniqueEmail("cors-evil");
    // The browser holds a session cookie for the service (signed up from the trusted app).
    const app = await openAt(appOrigin);
    const up = answered(await pageFetch(app, `${server.auth}/sign-up/email`, { method: "POST", json: { name: "Victim", email, password: "victim-password-1" } }));
    expect(up.status).toBe(200);

    const evil = await app.context().newPage();
    await evil.goto(`${evilOrigin}/`);
    const victimEmail = uniqueEmail("cors-evil-new");
    const signUp = await pageFetch(evil, `${server.auth}/sign-up/email`, { method: "POST", json: { name: "Evil", email: victimEmail, password: "evil-password-1" } });
    expect(signUp).toEqual({ ok: false, error: expect.stringMatching(/TypeError: Failed to fetch/) });
    // The preflight failed, so the POST itself was never sent: no such user.
    expect((await post(`${server.auth}/sign-in/email`, { email: victimEmail, password: "evil-password-1" })).status).toBe(401);

    // A simple GET is sent with the cookie, but the page gets no answer to read.
    expect(await pageFetch(evil, `${server.auth}/get-session`)).toEqual({ ok: false, error: expect.stringMatching(/Failed to fetch/) });
    expect(await pageFetch(evil, `${server.url}/api/trpc/getSession`)).toEqual({ ok: false, error: expect.stringMatching(/Failed to fetch/) });
    // The same browser, from the trusted app, still reads it.
    expect(answered(await pageFetch(app, `${server.auth}/get-session`)).body?.user.email).toBe(email);
  });
});
