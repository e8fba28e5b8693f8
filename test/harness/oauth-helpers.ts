import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino, type Logger } from "pino";
import { expect } from "vitest";
import type { PortcullisConfig } from "../../src/index.ts";
import { cookieFrom, request, TEST_ORIGIN, type Reply, type RequestOptions } from "./http.ts";
import type { TestOidcProvider } from "./oidc.ts";
import type { TestServer } from "./server.ts";

/** The service's public URL in tests; the bridge listens elsewhere, as behind a proxy. */
export const PUBLIC_URL = TEST_ORIGIN;
export const callbackUri = (name: string) => `${PUBLIC_URL}/api/auth/callback/${name}`;

type ProviderInput = NonNullable<PortcullisConfig["providers"]>[string];
type Generic = Extract<ProviderInput, { type: "oauth2" }>;
type Google = Extract<ProviderInput, { type: "google" }>;

/**
 * The real OIDC provider registered twice: as a generic "oauth2" provider (`oidc`, Basic client
 * auth, endpoints from its discovery, mapUserInfo over the OIDC claims) and as the `google`
 * built-in with its endpoints, issuer and JWKS overridden (client_secret_post; id_token checked).
 * Both take the issuer and RFC 9207 `iss` support from the discovery document.
 */
export function oidcProviders(oidc: TestOidcProvider): { oidc: Generic; google: Google } {
  const d = oidc.discovery;
  const requireIssuerParameter = d.authorization_response_iss_parameter_supported === true;
  return {
    oidc: {
      type: "oauth2",
      clientId: oidc.basicClient.clientId,
      clientSecret: oidc.basicClient.clientSecret,
      authUrl: d.authorization_endpoint,
      tokenUrl: d.token_endpoint,
      userInfoUrl: d.userinfo_endpoint,
      scopes: ["openid", "email", "profile"],
      mapUserInfo: (raw) => ({
        id: raw.sub as string,
        email: raw.email as string,
        name: raw.name as string | undefined,
        image: raw.picture as string | undefined,
        emailVerified: raw.email_verified as boolean | undefined,
      }),
      issuer: d.issuer,
      requireIssuerParameter,
    },
    google: {
      type: "google",
      clientId: oidc.postClient.clientId,
      clientSecret: oidc.postClient.clientSecret,
      authUrl: d.authorization_endpoint,
      tokenUrl: d.token_endpoint,
      userInfoUrl: d.userinfo_endpoint,
      issuer: d.issuer,
      requireIssuerParameter,
      jwksUrl: d.jwks_uri,
    },
  };
}

/** The browser arriving at a URL of the public origin: sent to the test server instead. */
export function atServer(server: TestServer, url: string): string {
  return url.startsWith(`${PUBLIC_URL}/`) ? `${server.url}${url.slice(PUBLIC_URL.length)}` : url;
}

/** The state cookie's name on the plain-http test origin (docs/wire-contract.md §5). */
export const STATE_COOKIE = "portcullis.state";
/** The Set-Cookie of a callback that used its state up: the state cookie cleared (and no session cookie). */
export const STATE_CLEARED = `${STATE_COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`;

/**
 * A test browser: a tiny cookie jar for our origin, so the state cookie set by the start of a
 * flow comes back with its callback, as a real browser's would. Cookies cleared by the server
 * (Max-Age=0) are dropped.
 */
export class Browser {
  private readonly jar = new Map<string, string>();

  /** `initial`: a `name=value; name=value` Cookie header the browser already holds (a session). */
  constructor(initial?: string | null) {
    for (const pair of initial ? initial.split(/;\s*/) : []) this.set(pair);
  }

  private set(pair: string) {
    const eq = pair.indexOf("=");
    if (eq > 0) this.jar.set(pair.slice(0, eq).trim(), pair.slice(eq + 1));
  }

  /** The Cookie header it sends, or undefined when it holds none. */
  get cookie(): string | undefined {
    return this.jar.size ? [...this.jar].map(([k, v]) => `${k}=${v}`).join("; ") : undefined;
  }

  value(name: string): string | null {
    return this.jar.get(name) ?? null;
  }

  store(headers: Headers) {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(";");
      if (/;\s*Max-Age=0(;|$)/i.test(line)) this.jar.delete(pair!.slice(0, pair!.indexOf("=")).trim());
      else this.set(pair!);
    }
  }

  async request<T = any>(method: string, url: string, opts: RequestOptions = {}): Promise<Reply<T>> {
    const res = await request<T>(method, url, { ...opts, cookie: opts.cookie ?? this.cookie });
    this.store(res.headers);
    return res;
  }

  get<T = any>(url: string, opts: RequestOptions = {}) {
    return this.request<T>("GET", url, opts);
  }

  post<T = any>(url: string, json?: unknown, opts: RequestOptions = {}) {
    return this.request<T>("POST", url, { ...opts, json: json ?? opts.json });
  }
}

export interface BrowserSignIn {
  start: Reply;
  callback: Reply;
  /** `portcullis.session_token=...` set by the callback, or null. */
  cookie: string | null;
  /** The browser that ran the flow. */
  browser: Browser;
}

/**
 * POST /sign-in/social (or /link-social when the browser holds a session), then the provider's
 * authorize endpoint with login and consent: the start answer and where the provider sent the
 * browser back (the callback URL with code, state and iss).
 */
export async function startAndAuthorize(
  server: TestServer,
  oidc: TestOidcProvider,
  browser: Browser,
  provider: string,
  sub: string,
  body: Record<string, unknown> = {},
  link = false,
): Promise<{ start: Reply; location: string }> {
  const start = await browser.post(`${server.auth}/${link ? "link-social" : "sign-in/social"}`, { provider, ...body });
  expect(start.status, start.text).toBe(200);
  const outcome = await oidc.authorize(start.body.url, { sub });
  if (outcome.kind !== "redirect") throw new Error("expected a redirect back from the provider");
  return { start, location: atServer(server, outcome.location) };
}

/**
 * The whole browser flow over plain HTTP: POST /sign-in/social (or /link-social with `cookie`),
 * the provider's authorize endpoint with login and consent, then the redirect back to
 * /callback/{provider} in the same browser (its state cookie along).
 */
export async function browserFlow(
  server: TestServer,
  oidc: TestOidcProvider,
  provider: string,
  sub: string,
  body: Record<string, unknown> = {},
  link?: { cookie: string },
): Promise<BrowserSignIn> {
  const browser = new Browser(link?.cookie);
  const { start, location } = await startAndAuthorize(server, oidc, browser, provider, sub, body, link !== undefined);
  const callback = await browser.get(location);
  return { start, callback, cookie: cookieFrom(callback.headers), browser };
}

/** A user signed in by social sign-in: the cookie, and the bearer token behind it. */
export function tokenOf(cookie: string): string {
  return cookie.slice(cookie.indexOf("=") + 1);
}

export function expectError(res: Reply, status: number, code: string): void {
  expect(res.status, res.text).toBe(status);
  expect(res.body?.code, res.text).toBe(code);
  expect(typeof res.body.message).toBe("string");
}

/** A log sink: the service's JSON lines, for asserting what is (and is not) logged. */
export function captureLogs(): { logger: Logger; lines: string[]; entries(): Record<string, any>[] } {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split("\n").filter(Boolean));
      done();
    },
  });
  return { logger: pino({ level: "debug" }, sink), lines, entries: () => lines.map((l) => JSON.parse(l)) };
}

export interface RecordedRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage["headers"];
  form: URLSearchParams;
}

export interface FakeReply {
  status?: number;
  json?: unknown;
  text?: string;
}

export interface FakeProvider {
  url: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** A tiny node:http provider for the built-ins and the failure cases: `route` answers each request. */
export async function startFakeProvider(route: (req: RecordedRequest) => FakeReply | Promise<FakeReply>): Promise<FakeProvider> {
  const requests: RecordedRequest[] = [];
  const server: Server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = new URL(req.url ?? "/", "http://fake");
    const recorded = { method: req.method ?? "GET", path: url.pathname, query: url.searchParams, headers: req.headers, form: new URLSearchParams(Buffer.concat(chunks).toString()) };
    requests.push(recorded);
    const reply = await route(recorded);
    if (reply.text !== undefined) res.writeHead(reply.status ?? 200, { "content-type": "text/plain" }).end(reply.text);
    else res.writeHead(reply.status ?? 200, { "content-type": "application/json" }).end(JSON.stringify(reply.json ?? {}));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** RFC 7636 §4.6 as a fake token endpoint checks it. */
export function s256(verifier: string): string {
  return createHash("sha256").update(verifier).digest("base64url");
}

/** The Basic credentials of a token request (RFC 6749 §2.3.1), decoded. */
export function basicCredentials(req: RecordedRequest): [string, string] | null {
  const auth = req.headers.authorization;
  if (!auth?.startsWith("Basic ")) return null;
  const [id, secret] = Buffer.from(auth.slice(6), "base64").toString().split(":") as [string, string];
  const decode = (v: string) => decodeURIComponent(v.replace(/\+/g, " "));
  return [decode(id), decode(secret)];
}
