import type { IncomingMessage } from "node:http";
import { parse as parseCookies } from "cookie";
import proxyAddr from "proxy-addr";
import type { App } from "../src/app.ts";
import type { ResolvedConfig } from "../src/config/index.ts";
import { AuthError } from "../src/errors.ts";
import { isTrustedOrigin } from "../src/security/origins.ts";

export type ClientIpOf = (req: IncomingMessage) => string;

/**
 * The client address for rate limits and session records. Without `trustProxy`, the socket
 * peer. With it, the address the nearest untrusted hop was seen from: proxy-addr (Express's
 * parser) walks X-Forwarded-For from the right, past the trusted proxies only. The leftmost
 * entry is whatever the client wrote and is never believed on its own.
 * `true` = one hop (the reverse proxy in front of us), N = N hops, a list = those proxies.
 */
export function clientIpResolver(trustProxy: ResolvedConfig["trustProxy"]): ClientIpOf {
  if (trustProxy === false || trustProxy === 0) return (req) => req.socket.remoteAddress ?? "unknown";
  const hops = trustProxy === true ? 1 : trustProxy;
  const trust = typeof hops === "number" ? (_addr: string, i: number) => i < hops : proxyAddr.compile(hops);
  return (req) => proxyAddr(req, trust) ?? "unknown";
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

function header(req: IncomingMessage, name: string): string | undefined {
  const value = req.headers[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
}

function refererOrigin(req: IncomingMessage): string | undefined {
  const referer = header(req, "referer");
  return referer && URL.canParse(referer) ? new URL(referer).origin : undefined;
}

/** §3's reading: the Origin header, else (absent or "null") the origin of the Referer. */
function requestOrigin(req: IncomingMessage): string | undefined {
  const origin = header(req, "origin");
  if (origin && origin !== "null") return origin;
  return refererOrigin(req) ?? origin;
}

/** docs/wire-contract.md §3: Origin (or Referer) present and our own or trusted. */
function assertTrustedOrigin(app: App, req: IncomingMessage): void {
  const origin = requestOrigin(req);
  if (!origin || origin === "null") throw new AuthError("MISSING_OR_NULL_ORIGIN");
  if (!isTrustedOrigin(app, origin)) throw new AuthError("INVALID_ORIGIN");
}

/**
 * CSRF (docs/wire-contract.md §3): a state-changing request that carries the session cookie must come
 * from our own origin or a trusted one. Bearer-only requests are exempt: browsers never attach
 * an Authorization header on their own.
 */
export function checkOrigin(app: App, req: IncomingMessage): void {
  if (SAFE_METHODS.has(req.method ?? "GET")) return;
  const cookieHeader = req.headers.cookie;
  if (!cookieHeader || parseCookies(cookieHeader)[app.cookieName] === undefined) return;
  assertTrustedOrigin(app, req);
}

/**
 * Login CSRF (better-auth's formCsrfMiddleware): a page elsewhere must not sign
 * the visitor's browser into an account of its choosing, and a first sign-in carries no session
 * cookie for checkOrigin to see. So a sign-in or sign-up request is refused when
 * - it carries any cookie and fails §3's origin rule;
 * - it comes from a browser (`Sec-Fetch-Site`, https://www.w3.org/TR/fetch-metadata/, or an
 *   Origin/Referer) whose origin is missing, "null" or neither ours nor trusted;
 * - it is `Sec-Fetch-Site: cross-site` and is a navigation (a form post) or claims our own
 *   origin: only a CORS fetch from a trusted origin on another site may be cross-site.
 * No Origin, no Referer and no Sec-Fetch-Site is a server-to-server or CLI client: allowed.
 * Sec-Fetch-Site is the mark of a browser (every current one sends it with the other Sec-Fetch-*
 * headers, and pages cannot set it); Node's fetch sends `Sec-Fetch-Mode: cors` alone.
 */
export function checkLoginOrigin(app: App, req: IncomingMessage): void {
  if (SAFE_METHODS.has(req.method ?? "GET")) return;
  if (req.headers.cookie) return assertTrustedOrigin(app, req);
  const site = header(req, "sec-fetch-site");
  // Stricter than §3: an Origin of "null" (sandboxed frame, data: URL) is the answer, not a cue to read Referer.
  const origin = header(req, "origin") ?? refererOrigin(req);
  if (origin === undefined && site === undefined) return;
  if (!origin || origin === "null" || !isTrustedOrigin(app, origin)) throw new AuthError("INVALID_ORIGIN");
  if (site === "cross-site" && (header(req, "sec-fetch-mode") === "navigate" || origin === app.origin)) throw new AuthError("INVALID_ORIGIN");
}

export async function checkRateLimit(app: App, ip: string, path: string): Promise<void> {
  const decision = await app.rateLimiter.consume(ip, path);
  if (!decision.allowed) {
    const seconds = String(decision.retryAfterSec);
    throw new AuthError("RATE_LIMITED", { headers: { "retry-after": seconds, "x-retry-after": seconds } });
  }
}
