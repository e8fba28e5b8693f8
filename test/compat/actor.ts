/**
 * One person at one server: the official `better-auth/client` (username, admin, device,
 * two-factor, passkey, magic-link, email-otp and organization client plugins) over a fetch that behaves like a browser tab. It keeps
 * a cookie jar for the server's origin (OAuth state, admin_session, two-factor and passkey
 * challenges, trusted devices, delete-user links), sends `Origin` on every
 * non-GET request (both servers' CSRF rules, docs/wire-contract.md §3), captures `set-auth-token` and
 * sends it back as Bearer (better-auth's documented non-browser pattern), and remembers what
 * the last response said about the session so a step can record it.
 */
import { createAuthClient } from "better-auth/client";
import { apiKeyClient } from "@better-auth/api-key/client";
import { adminClient, deviceAuthorizationClient, emailOTPClient, jwtClient, magicLinkClient, organizationClient, twoFactorClient, usernameClient } from "better-auth/client/plugins";
// Its ceremony methods need navigator.credentials (a browser); here only its plain endpoints are called.
import { passkeyClient } from "@better-auth/passkey/client";
import { oauthProviderClient } from "@better-auth/oauth-provider/client";

export interface LastResponse {
  /** `METHOD /path` below the base path, query left out. */
  endpoint: string;
  status: number;
  /** A `set-auth-token` other than the token already held was sent. */
  authToken: boolean;
  /**
   * What the response did to the session cookie (any `*.session_token`; names differ by
   * design): `set`, `set for the browser session` (no Max-Age/Expires: rememberMe false), `cleared`.
   */
  sessionCookie: "set" | "set for the browser session" | "cleared" | null;
  /**
   * Any session cookie line the response carried, changed or not (a re-sent cookie shows here
   * only): `Max-Age=N`, `no Max-Age` (browser session) or `cleared`. Scenarios record it where
   * it is the point (helpers.ts sentSessionCookie); step records leave it out.
   */
  sessionCookieSent: string | null;
  location: string | null;
  contentType: string | null;
  /** The `set-auth-jwt` header (the jwt plugin's token on get-session), when one came. */
  authJwt: string | null;
}

function makeClient(baseURL: string, fetchImpl: typeof fetch) {
  return createAuthClient({
    baseURL,
    basePath: "/api/auth",
    plugins: [
      usernameClient(),
      adminClient(),
      deviceAuthorizationClient(),
      twoFactorClient(),
      passkeyClient(),
      jwtClient(),
      apiKeyClient(),
      magicLinkClient(),
      emailOTPClient(),
      oauthProviderClient(),
      organizationClient({ teams: { enabled: true } }),
    ],
    fetchOptions: { customFetchImpl: fetchImpl },
  });
}

export type AuthClient = ReturnType<typeof makeClient>;

const isSessionCookie = (name: string) => name === "session_token" || name.endsWith(".session_token");

export class Actor {
  readonly client: AuthClient;
  /** Bearer token from the last `set-auth-token` (or set by hand: a device access token). */
  token: string | null = null;
  last: LastResponse | null = null;
  private readonly jar = new Map<string, string>();

  constructor(
    readonly origin: string,
    readonly name: string,
  ) {
    this.client = makeClient(origin, this.fetch);
  }

  cookie(name: string): string | null {
    for (const [key, value] of this.jar) if (key === name || key.endsWith(`.${name}`)) return value;
    return null;
  }

  /** Forget every cookie and the bearer token: a fresh browser. */
  forget(): void {
    this.jar.clear();
    this.token = null;
  }

  /** The browser's fetch, as the client SDK and link-following steps use it. */
  readonly fetch: typeof fetch = async (input, init = {}) => {
    const request = new Request(input, init);
    const headers = new Headers(request.headers);
    const url = new URL(request.url);
    const sameOrigin = url.origin === this.origin;
    if (sameOrigin) {
      if (this.jar.size > 0) headers.set("cookie", [...this.jar].map(([k, v]) => `${k}=${v}`).join("; "));
      if (this.token && !headers.has("authorization")) headers.set("authorization", `Bearer ${this.token}`);
      if (request.method !== "GET" && request.method !== "HEAD") headers.set("origin", this.origin);
    }
    const body = request.method === "GET" || request.method === "HEAD" ? undefined : await request.arrayBuffer();
    const response = await fetch(url, { method: request.method, headers, body, redirect: "manual" });
    if (sameOrigin) this.remember(request.method, url, response, [...this.jar.keys()].some(isSessionCookie));
    return response;
  };

  /**
   * `heldSession`: the request carried a session cookie. What the client sees is a change: a
   * session cookie with a new value, one the browser held being cleared, a `set-auth-token`
   * different from the token it holds. Re-sending the same session (better-auth refreshes its
   * cookie on update-user, change-email...) changes nothing for the client, nor does clearing a
   * cookie it does not hold.
   */
  private remember(method: string, url: URL, response: Response, heldSession: boolean): void {
    let sessionCookie: LastResponse["sessionCookie"] = null;
    let sessionCookieSent: string | null = null;
    for (const line of response.headers.getSetCookie()) {
      const [pair = ""] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1);
      const cleared = value === "" || /;\s*max-age=0(;|$)/i.test(line) || /;\s*expires=Thu, 01 Jan 1970/i.test(line);
      const before = this.jar.get(name);
      if (cleared) this.jar.delete(name);
      else this.jar.set(name, value);
      if (isSessionCookie(name)) {
        const maxAge = /;\s*max-age=(\d+)/i.exec(line)?.[1];
        sessionCookieSent = cleared ? "cleared" : maxAge ? `Max-Age=${maxAge}` : "no Max-Age";
      }
      if (isSessionCookie(name) && (cleared ? heldSession : before !== value)) {
        sessionCookie = cleared ? "cleared" : /;\s*(max-age|expires)=/i.test(line) ? "set" : "set for the browser session";
      }
    }
    const authToken = response.headers.get("set-auth-token");
    const newToken = authToken !== null && authToken !== this.token;
    if (authToken) this.token = authToken;
    this.last = {
      endpoint: `${method} ${url.pathname.replace(/^\/api\/auth/, "").replace(/^\/reset-password\/.+/, "/reset-password/:token")}`,
      status: response.status,
      authToken: newToken,
      sessionCookie,
      sessionCookieSent,
      location: response.headers.get("location"),
      contentType: response.headers.get("content-type"),
      authJwt: response.headers.get("set-auth-jwt"),
    };
  }
}
