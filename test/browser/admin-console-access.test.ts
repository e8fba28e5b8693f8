import { gunzipSync } from "node:zlib";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorCode } from "portcullis/client";
import { resolveConfig } from "../../src/config/index.ts";
import { totpCode } from "../../src/modules/two-factor/totp.ts";
import { CONSOLE_CSP } from "../../rest-bridge/console.ts";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { SECOND } from "../harness/clock.ts";
import { testDialect } from "../harness/database.ts";
import { post, request } from "../harness/http.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";
import { bootstrapAdmin, PASSWORD, signUp, type SignedInUser } from "../harness/admin-helpers.ts";
import { clientAsPage, closeConsole, ensureConsole, openConsole, screenshots, seedUsers, signInConsole, startConsoleServer } from "./admin-console-helpers.ts";

/**
 * Who gets what at /admin: the files and their headers, the config switch, a plain user (refused,
 * in the server's words), a role that may only look (every action hidden, and refused by the
 * server anyway), and an admin with two-factor on (the console asks for the code).
 */

let server: TestServer;
let browser: Browser;
let plain: SignedInUser;
let support: SignedInUser;
const shots = screenshots("access");

beforeAll(async () => {
  ensureConsole();
  server = await startConsoleServer();
  const admin = await bootstrapAdmin(server);
  await seedUsers(server, 30);
  plain = await signUp(server, { name: "Plain User" });
  support = await signUp(server, { name: "Sam Support" });
  const setRole = await post(`${server.auth}/admin/set-role`, { userId: support.id, role: "support" }, { bearer: admin.token });
  expect(setRole.status, setRole.text).toBe(200);
  if (hasChromium()) browser = await launchChromium();
}, 120_000);

afterAll(() => closeConsole(browser, server, shots, "admin console"));

describe("serving /admin", () => {
  it("answers the app with its content types, cache headers and CSP; client routes get index.html", async () => {
    const index = await request("GET", `${server.url}/admin`);
    expect(index.status).toBe(200);
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    expect(index.headers.get("content-security-policy")).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self';");
    expect(CONSOLE_CSP).not.toContain("unsafe");
    expect(index.headers.get("x-frame-options")).toBe("DENY");
    expect(index.headers.get("x-content-type-options")).toBe("nosniff");
    expect(index.text).toContain('<div id="root"></div>');

    for (const route of ["/admin/", "/admin/users", "/admin/users/0b6c3f4e-0000-4000-8000-000000000000", "/admin/audit?action=ban-user"]) {
      const res = await request("GET", `${server.url}${route}`);
      expect(res.status, route).toBe(200);
      expect(res.text, route).toBe(index.text);
    }

    const script = /src="(\/admin\/assets\/[^"]+\.js)"/.exec(index.text)?.[1];
    const style = /href="(\/admin\/assets\/[^"]+\.css)"/.exec(index.text)?.[1];
    expect(script && style).toBeTruthy();
    const js = await fetch(`${server.url}${script}`, { headers: { "accept-encoding": "gzip" } });
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    expect(js.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    const css = await request("GET", `${server.url}${style}`);
    expect(css.headers.get("content-type")).toBe("text/css; charset=utf-8");

    // Compressed for clients that ask (node's fetch inflates it), plain for the others.
    const raw = await new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      import("node:http").then(({ get }) =>
        get(`${server.url}${script}`, { headers: { "accept-encoding": "gzip" } }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => resolve({ encoding: res.headers["content-encoding"], body: Buffer.concat(chunks) }));
        }).on("error", reject),
      );
    });
    expect(raw.encoding).toBe("gzip");
    expect(gunzipSync(raw.body).toString()).toBe(await js.text());

    // Revalidation of index.html.
    const etag = index.headers.get("etag")!;
    expect((await request("GET", `${server.url}/admin`, { headers: { "if-none-match": etag } })).status).toBe(304);
    const head = await request("HEAD", `${server.url}/admin/users`);
    expect(head.status).toBe(200);
    expect(head.text).toBe("");
  });

  it("a missing asset, another method or a file name outside the build is a 404, not the app", async () => {
    for (const [method, path] of [
      ["GET", "/admin/assets/missing.js"],
      ["GET", "/admin/favicon.ico"],
      ["GET", "/admin/.build-stamp"],
      ["GET", "/admin/../package.json"],
      ["GET", "/admin/%2e%2e/%2e%2e/package.json"],
      ["POST", "/admin"],
      ["DELETE", "/admin/users"],
    ] as const) {
      const res = await request(method, `${server.url}${path}`);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body?.code, `${method} ${path}`).toBe("NOT_FOUND");
    }
  });

  it("adminConsole.enabled: off answers 404; unset, it is on except in production", async () => {
    const off = await startTestServer({ adminConsole: { enabled: false } });
    try {
      const res = await request("GET", `${off.url}/admin`);
      expect(res.status).toBe(404);
      expect(res.body.code).toBe("NOT_FOUND");
    } finally {
      await off.close();
    }
    const before = process.env.NODE_ENV;
    try {
      process.env.NODE_ENV = "production";
      expect(resolveConfig({}).adminConsole.enabled).toBe(false);
      expect(resolveConfig({ adminConsole: { enabled: true } }).adminConsole.enabled).toBe(true);
      process.env.NODE_ENV = "development";
      expect(resolveConfig({}).adminConsole.enabled).toBe(true);
      expect(resolveConfig({ adminConsole: { enabled: false } }).adminConsole.enabled).toBe(false);
    } finally {
      process.env.NODE_ENV = before;
    }
    expect(() => resolveConfig({ adminConsole: { enabled: "yes" } as never })).toThrow(/adminConsole\.enabled/);
  });
});

describe.skipIf(!hasChromium() && !process.env.CI)(`who may use the console (${testDialect})`, () => {
  it("a user without admin permissions is refused, in the server's words", async () => {
    const { page, problems } = await openConsole(browser, server);
    await signInConsole(page, plain.email, PASSWORD);
    await page.getByRole("heading", { name: "No admin access" }).waitFor();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe(
      "The server refused: You are not allowed to list users (YOU_ARE_NOT_ALLOWED_TO_LIST_USERS, HTTP 403)",
    );
    // Nothing to navigate to.
    expect(await page.getByRole("navigation", { name: "Console" }).getByRole("link").count()).toBe(0);
    await shots.shot(page, "non-admin-refused");
    // The same address typed by hand: the page asks, the server refuses.
    await page.goto(`${server.url}/admin/audit`);
    await page.getByRole("alert").filter({ hasText: "YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS" }).waitFor();
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("a role that may only look sees no action it lacks, and the server refuses them anyway", async () => {
    const { page, problems } = await openConsole(browser, server);
    await signInConsole(page, support.email, PASSWORD);
    // audit: list lets it read the dashboard, its first page
    await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor();
    const nav = page.getByRole("navigation", { name: "Console" });
    expect(await nav.getByRole("link").allTextContents()).toEqual(["Dashboard", "Users", "Organizations", "Audit log"]);
    await nav.getByRole("link", { name: "Users" }).click();
    await page.getByRole("heading", { name: "Users", level: 1 }).waitFor();
    expect(await page.getByRole("link", { name: "Create a user" }).count()).toBe(0);

    await page.getByRole("link", { name: plain.email }).click();
    await page.getByRole("heading", { name: plain.email, level: 1 }).waitFor();
    await page.getByRole("heading", { name: "Sessions" }).waitFor();
    await page.getByRole("heading", { name: "Linked accounts" }).waitFor();
    await page.getByRole("heading", { name: "Audit events" }).waitFor();
    expect(await page.getByRole("heading", { name: "Actions" }).count()).toBe(0);
    for (const name of ["Ban user", "Unban user", "Set role", "Set password", `Impersonate ${plain.email}`, "Delete user", "Revoke", "Revoke all sessions"]) {
      expect(await page.getByRole("button", { name, exact: true }).count(), name).toBe(0);
    }
    await shots.shot(page, "support-role-actions-hidden");

    const client = await clientAsPage(page, server);
    const refused = async (call: Promise<unknown>) => call.then(() => "allowed", (err: unknown) => authErrorCode(err));
    expect(await refused(client.admin.banUser.mutate({ userId: plain.id, banReason: "no" }))).toBe("YOU_ARE_NOT_ALLOWED_TO_BAN_USERS");
    expect(await refused(client.admin.impersonateUser.mutate({ userId: plain.id }))).toBe("YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS");
    expect(await refused(client.admin.removeUser.mutate({ userId: plain.id }))).toBe("YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS");
    expect(await refused(client.admin.revokeUserSessions.mutate({ userId: plain.id }))).toBe("YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS");
    expect(await refused(client.admin.listUsers.query({ limit: 1 }))).toBe("allowed");
    expect(problems).toEqual([]);
    await page.context().close();
  });

  it("an admin with two-factor on is asked for the code; a wrong one is refused in words", async () => {
    const admin2 = await bootstrapAdmin(server);
    const enabled = await post(`${server.auth}/two-factor/enable`, { password: PASSWORD }, { bearer: admin2.token });
    expect(enabled.status, enabled.text).toBe(200);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    server.clock.advance(30 * SECOND);
    const verified = await post(`${server.auth}/two-factor/verify-totp`, { code: totpCode(secret, server.clock.now().getTime()) }, { bearer: admin2.token });
    expect(verified.status, verified.text).toBe(200);

    const { page, problems } = await openConsole(browser, server);
    await signInConsole(page, admin2.email, PASSWORD);
    await page.getByRole("heading", { name: "Two-factor verification" }).waitFor();
    expect(await page.evaluate("document.activeElement.textContent")).toBe("Two-factor verification");
    await shots.shot(page, "two-factor-prompt");
    await page.getByLabel("Code from your authenticator app").fill("000000");
    await page.getByRole("button", { name: "Verify" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toBe("Verification failed: Invalid code (INVALID_CODE, HTTP 401)");
    await shots.shot(page, "two-factor-wrong-code");

    server.clock.advance(30 * SECOND);
    await page.getByLabel("Code from your authenticator app").fill(totpCode(secret, server.clock.now().getTime()));
    await page.getByRole("button", { name: "Verify" }).click();
    await page.getByRole("heading", { name: "Dashboard", level: 1 }).waitFor();
    expect(await page.locator(".who").textContent()).toBe(`Signed in as ${admin2.email} (role: admin)`);
    await shots.shot(page, "two-factor-signed-in");
    expect(problems).toEqual([]);
    await page.context().close();
  });
});
