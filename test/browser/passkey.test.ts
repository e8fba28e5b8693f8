import { mkdirSync, readFileSync } from "node:fs";
import { type Browser, type BrowserContext, type CDPSession, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueEmail } from "../harness/http.ts";
import { hasChromium, launchChromium } from "../harness/browser.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/**
 * Passkeys in a real browser: Debian's `chromium` through playwright-core, with Chrome's virtual
 * authenticator (CDP WebAuthn domain) standing in for the platform authenticator, and
 * @simplewebauthn/browser (what better-auth's passkeyClient calls) on a page of the service's
 * own origin. WebAuthn needs a secure context and a domain as RP ID: the service's publicUrl is
 * http://localhost:<port> (W3C WebAuthn L3 §5.1.3, localhost is potentially trustworthy).
 * Screenshots of each step go to test-output/passkey/. Skipped when chromium is missing (CI
 * installs it, .ci/run).
 */
const PASSWORD = "password123";
const SHOTS = new URL("../../test-output/passkey/", import.meta.url);
/** The package's exports do not list its UMD bundle: read by path. */
const UMD = new URL("../../node_modules/@simplewebauthn/browser/dist/bundle/index.umd.min.js", import.meta.url);

/** The page's driver, in the page: fetch with the browser's cookies, the ceremonies through @simplewebauthn/browser. */
const DRIVER = `
const { startRegistration, startAuthentication } = SimpleWebAuthnBrowser;
const show = (text) => {
  document.getElementById("status").textContent = text;
  document.getElementById("log").textContent += text + "\\n";
};
async function call(method, path, body) {
  const res = await fetch("/api/auth" + path, {
    method,
    credentials: "include",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}
/** Runs a browser ceremony; a refusal by the browser becomes { error } instead of a throw. */
async function ceremony(start) {
  try {
    // better-auth's passkeyClient drops clientExtensionResults before posting.
    const { clientExtensionResults, ...response } = await start();
    return { response };
  } catch (e) {
    return { error: e.code || e.name };
  }
}
window.passkeyTest = {
  call,
  show,
  async signUp(email, password) {
    const r = await call("POST", "/sign-up/email", { name: "Browser User", email, password });
    show("signed up as " + email + ": " + r.status);
    return r;
  },
  async register(name) {
    const options = await call("GET", "/passkey/generate-register-options");
    if (options.status !== 200) return options;
    const made = await ceremony(() => startRegistration({ optionsJSON: options.body }));
    if (made.error) { show("registration refused by the browser: " + made.error); return made; }
    const r = await call("POST", "/passkey/verify-registration", { response: made.response, name });
    show("passkey registered: " + r.status + " " + (r.body.code || r.body.name));
    return r;
  },
  async authenticateOptions() {
    return (await call("GET", "/passkey/generate-authenticate-options")).body;
  },
  async signInWith(options) {
    const made = await ceremony(() => startAuthentication({ optionsJSON: options }));
    if (made.error) { show("sign-in refused by the browser: " + made.error); return made; }
    const r = await call("POST", "/passkey/verify-authentication", { response: made.response });
    show("passkey sign-in: " + r.status + " " + (r.body.code || r.body.user.email));
    return r;
  },
  async signIn() {
    return this.signInWith(await this.authenticateOptions());
  },
};
show("ready");
`;

const PAGE = `<!doctype html><html><head><meta charset="utf-8"><title>Passkey test</title></head>
<body style="font: 16px system-ui; margin: 2rem"><h1>Portcullis passkeys</h1>
<p id="status" role="status" style="font-size: 1.4rem">loading</p><pre id="log"></pre>
<script src="/passkey-test/simplewebauthn-browser.js"></script><script src="/passkey-test/driver.js"></script></body></html>`;

let server: TestServer;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  if (!hasChromium()) return;
  mkdirSync(SHOTS, { recursive: true });
  server = await startTestServer({}, { ownOrigin: true, publicHost: "localhost" });
  origin = server.portcullis.app.origin;
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await server?.close();
});

interface Tab {
  context: BrowserContext;
  page: Page;
  cdp: CDPSession;
  authenticatorId: string;
  problems: string[];
}

/** CTAP2 platform authenticator with resident keys and user verification, always consenting. */
const AUTHENTICATOR = { protocol: "ctap2", transport: "internal", hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true } as const;

async function addAuthenticator(cdp: CDPSession): Promise<string> {
  return (await cdp.send("WebAuthn.addVirtualAuthenticator", { options: AUTHENTICATOR })).authenticatorId;
}

/** A fresh browser profile on the test page, with one virtual authenticator. */
async function openTab(): Promise<Tab> {
  const context = await browser.newContext();
  await context.route(`${origin}/passkey-test`, (route) => route.fulfill({ contentType: "text/html", body: PAGE }));
  await context.route(`${origin}/passkey-test/simplewebauthn-browser.js`, (route) => route.fulfill({ contentType: "text/javascript", body: readFileSync(UMD, "utf8") }));
  await context.route(`${origin}/passkey-test/driver.js`, (route) => route.fulfill({ contentType: "text/javascript", body: DRIVER }));
  const page = await context.newPage();
  const problems: string[] = [];
  page.on("pageerror", (e) => problems.push(e.message));
  const cdp = await context.newCDPSession(page);
  await cdp.send("WebAuthn.enable");
  const authenticatorId = await addAuthenticator(cdp);
  await page.goto(`${origin}/passkey-test`);
  await expect.poll(() => page.locator("#status").textContent()).toBe("ready");
  return { context, page, cdp, authenticatorId, problems };
}

type Answer = { status?: number; body?: any; error?: string; response?: unknown };
/** Calls `passkeyTest[fn](...args)` in the page. */
function run(tab: Tab, fn: string, ...args: unknown[]): Promise<Answer> {
  return tab.page.evaluate(([name, list]) => (globalThis as any).passkeyTest[name as string](...(list as unknown[])), [fn, args] as const);
}

async function shot(tab: Tab, name: string) {
  await tab.page.screenshot({ path: new URL(`${name}.png`, SHOTS).pathname, fullPage: true });
}

/** A new user signed up in the tab, with a passkey registered there; then signed out. */
async function userWithPasskey(tab: Tab, label: string) {
  const email = uniqueEmail(label);
  expect((await run(tab, "signUp", email, PASSWORD)).status).toBe(200);
  const registered = await run(tab, "register", `${label} passkey`);
  expect(registered.status, JSON.stringify(registered)).toBe(200);
  expect((await run(tab, "call", "POST", "/sign-out")).status).toBe(200);
  return { email, passkey: registered.body };
}

async function sessionsOf(userId: string): Promise<number> {
  const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select count(*) as n from sessions where user_id = ?", [userId]);
  return Number(rows[0].n);
}

describe.skipIf(!hasChromium() && !process.env.CI)("passkeys in headless Chromium (virtual authenticator)", () => {
  it("registers a passkey, lists it, signs out, and signs back in usernameless as the same user", async () => {
    const tab = await openTab();
    const email = uniqueEmail("passkey");
    expect((await run(tab, "signUp", email, PASSWORD)).status).toBe(200);
    await shot(tab, "1-signed-up");

    const registered = await run(tab, "register", "Laptop");
    expect(registered.status, JSON.stringify(registered)).toBe(200);
    expect(registered.body).toMatchObject({ name: "Laptop", deviceType: "singleDevice", backedUp: false, transports: "internal" });
    const [stored] = (await cdpCredentials(tab)).credentials;
    expect(stored).toMatchObject({ rpId: "localhost", isResidentCredential: true });
    expect(registered.body.credentialID).toBe(stored!.credentialId.replace(/=+$/, "").replace(/\+/g, "-").replace(/\//g, "_"));
    await shot(tab, "2-passkey-registered");

    const listed = await run(tab, "call", "GET", "/passkey/list-user-passkeys");
    expect(listed.body).toEqual([registered.body]);
    // excludeCredentials (L3 §5.4.3): the same authenticator cannot register twice.
    expect(await run(tab, "register", "Again")).toMatchObject({ error: "ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED" });

    expect((await run(tab, "call", "POST", "/sign-out")).status).toBe(200);
    expect((await run(tab, "call", "GET", "/get-session")).body).toBeNull();
    await run(tab, "show", "signed out");
    await shot(tab, "3-signed-out");

    const signedIn = await run(tab, "signIn");
    expect(signedIn.status, JSON.stringify(signedIn)).toBe(200);
    expect(signedIn.body.user.email).toBe(email);
    expect(signedIn.body.session.token).toEqual(expect.any(String));
    const session = await run(tab, "call", "GET", "/get-session");
    expect(session.body.user.id).toBe(registered.body.userId);
    expect(session.body.session.id).toBe(signedIn.body.session.id);
    await shot(tab, "4-signed-in-with-passkey");
    expect(tab.problems).toEqual([]);
    await tab.context.close();
  });

  it("a cloned authenticator (copied key, lower signature counter) is refused, and no session is issued", async () => {
    const tab = await openTab();
    const { passkey } = await userWithPasskey(tab, "clone");
    expect((await run(tab, "signIn")).status).toBe(200);
    expect((await run(tab, "call", "POST", "/sign-out")).status).toBe(200);
    expect((await run(tab, "signIn")).status).toBe(200);
    expect((await run(tab, "call", "POST", "/sign-out")).status).toBe(200);
    const [original] = (await cdpCredentials(tab)).credentials;
    expect(original!.signCount).toBeGreaterThanOrEqual(2);

    // The attacker's copy: same private key, its counter behind the original's. (Chrome allows
    // one internal authenticator at a time: the original goes first.)
    await tab.cdp.send("WebAuthn.removeVirtualAuthenticator", { authenticatorId: tab.authenticatorId });
    const cloneId = await addAuthenticator(tab.cdp);
    await tab.cdp.send("WebAuthn.addCredential", { authenticatorId: cloneId, credential: { ...original!, signCount: 0 } });
    const before = await sessionsOf(passkey.userId);

    const refused = await run(tab, "signIn");
    expect(refused.status, JSON.stringify(refused)).toBe(400);
    expect(refused.body.code).toBe("AUTHENTICATION_FAILED");
    expect(await sessionsOf(passkey.userId)).toBe(before);
    expect((await run(tab, "call", "GET", "/get-session")).body).toBeNull();
    await shot(tab, "5-clone-refused");
    await tab.context.close();
  });

  it("a challenge is bound to the browser that asked for it: another browser cannot use it, its owner still can", async () => {
    const owner = await openTab();
    await userWithPasskey(owner, "binding");
    const options = await run(owner, "authenticateOptions");
    const [credential] = (await cdpCredentials(owner)).credentials;

    // A second profile holding the same credential (counter ahead), answering the owner's challenge.
    const other = await openTab();
    await other.cdp.send("WebAuthn.addCredential", { authenticatorId: other.authenticatorId, credential: { ...credential!, signCount: 1000 } });
    const stolen = await run(other, "signInWith", options);
    expect(stolen.status, JSON.stringify(stolen)).toBe(400);
    expect(stolen.body.code).toBe("CHALLENGE_NOT_FOUND");
    await shot(other, "6-challenge-from-another-browser-refused");

    const own = await run(owner, "signInWith", options);
    expect(own.status, JSON.stringify(own)).toBe(200);
    await shot(owner, "7-challenge-used-by-its-browser");
    await other.context.close();
    await owner.context.close();
  });
});

function cdpCredentials(tab: Tab) {
  return tab.cdp.send("WebAuthn.getCredentials", { authenticatorId: tab.authenticatorId });
}
