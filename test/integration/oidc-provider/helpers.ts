/** Shared steps of the OpenID provider tests: a client, a signed-in browser, the authorize → consent → code round. */
import { createHash, randomBytes } from "node:crypto";
import { expect } from "vitest";
import { createClient, type NewClient } from "../../../src/modules/oidc-provider/clients.ts";
import { cookieFrom, get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import type { PortcullisConfig } from "../../../src/index.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

export const REDIRECT = "https://rp.example.test/callback";

export type RelyingParty = { clientId: string; clientSecret: string | null };

/** A test file's server on its own origin (the pages' CSRF checks pass) with one registered confidential client. */
export async function serverWithClient(config: PortcullisConfig = {}): Promise<{ server: TestServer; rp: RelyingParty }> {
  const server = await startTestServer(config, { ownOrigin: true });
  return { server, rp: await registerClient(server) };
}

/** Registers a client through the service itself (the registration endpoints have their own tests). */
export async function registerClient(server: TestServer, overrides: Partial<NewClient> = {}) {
  const app = server.portcullis.app;
  const { client, secret } = await createClient(app, app.orm.em.fork(), {
    name: "Relying party",
    redirectUris: [REDIRECT],
    postLogoutRedirectUris: ["https://rp.example.test/logged-out"],
    grantTypes: ["authorization_code", "refresh_token", "client_credentials"],
    authMethod: "client_secret_basic",
    ...overrides,
  });
  return { clientId: client.clientId, clientSecret: secret };
}

export interface Browser {
  cookie: string;
  userId: string;
  email: string;
  origin: string;
}

export async function signUp(server: TestServer, password = "password123"): Promise<Browser> {
  const email = uniqueEmail("oidc");
  const res = await post(`${server.auth}/sign-up/email`, { name: "Ada Lovelace", email, password });
  expect(res.status).toBe(200);
  return { cookie: cookieFrom(res.headers)!, userId: res.body.user.id, email, origin: new URL(server.url).origin };
}

export function pkce() {
  const verifier = randomBytes(32).toString("base64url");
  return { verifier, challenge: createHash("sha256").update(verifier).digest("base64url") };
}

export const browserGet = (browser: Browser, url: string) => request("GET", url, { headers: { cookie: browser.cookie, accept: "text/html" } });
export const browserPost = (browser: Browser, url: string, json: unknown): Promise<Reply> =>
  post(url, json, { headers: { cookie: browser.cookie, origin: browser.origin } });

export function authorizeUrl(server: TestServer, params: Record<string, string>): string {
  const url = new URL(`${server.auth}/oauth2/authorize`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** GET /oauth2/authorize as the browser; where it is sent (absolute). */
export async function startAuthorize(server: TestServer, browser: Browser, url: string): Promise<URL> {
  const res = await browserGet(browser, url);
  expect(res.status, res.text).toBe(302);
  return new URL(res.headers.get("location")!, server.url);
}

/** The consent page's Allow (or Deny) for the request it was sent; where the browser goes next. */
export async function consent(server: TestServer, browser: Browser, consentPage: URL, accept = true): Promise<URL> {
  const res = await browserPost(browser, `${server.auth}/oauth2/consent`, { accept, oauth_query: consentPage.search.slice(1) });
  expect(res.status, res.text).toBe(200);
  return new URL(res.body.url);
}

/** authorize → (consent) → the client's redirect URI with the code. */
export async function authorizeToCallback(server: TestServer, browser: Browser, url: string): Promise<URL> {
  let next = await startAuthorize(server, browser, url);
  if (next.pathname.endsWith("/consent")) next = await consent(server, browser, next);
  return next;
}

export async function tokenRequest(server: TestServer, form: Record<string, string>, client?: { clientId: string; clientSecret: string | null }) {
  const headers: Record<string, string> = { "content-type": "application/x-www-form-urlencoded" };
  if (client?.clientSecret) headers.authorization = `Basic ${Buffer.from(`${encodeURIComponent(client.clientId)}:${encodeURIComponent(client.clientSecret)}`).toString("base64")}`;
  return request("POST", `${server.auth}/oauth2/token`, { headers, raw: new URLSearchParams(form).toString() });
}

export const userinfo = (server: TestServer, accessToken: string) => get(`${server.auth}/oauth2/userinfo`, { bearer: accessToken });
