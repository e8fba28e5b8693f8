import type { IncomingMessage } from "node:http";
import { parse as parseCookies } from "cookie";
import type { App } from "../src/app.ts";
import { AuthError } from "../src/errors.ts";
import { isTrustedOrigin } from "../src/security/origins.ts";

export function clientIp(app: App, req: IncomingMessage): string {
  if (app.config.trustProxy) {
    const forwarded = req.headers["x-forwarded-for"];
    const first = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim();
    if (first) return first;
  }
  return req.socket.remoteAddress ?? "unknown";
}

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * CSRF (CONTRACT.md §3): a state-changing request that carries the session cookie must come
 * from our own origin or a trusted one. Bearer-only requests are exempt: browsers never attach
 * an Authorization header on their own.
 */
export function checkOrigin(app: App, req: IncomingMessage): void {
  if (SAFE_METHODS.has(req.method ?? "GET")) return;
  const cookieHeader = req.headers.cookie;
  if (!cookieHeader || parseCookies(cookieHeader)[app.cookieName] === undefined) return;
  let origin = req.headers.origin;
  if ((!origin || origin === "null") && req.headers.referer && URL.canParse(req.headers.referer)) {
    origin = new URL(req.headers.referer).origin;
  }
  if (!origin || origin === "null") throw new AuthError("MISSING_OR_NULL_ORIGIN");
  if (!isTrustedOrigin(app, origin)) throw new AuthError("INVALID_ORIGIN");
}

export async function checkRateLimit(app: App, ip: string, path: string): Promise<void> {
  const decision = await app.rateLimiter.consume(ip, path);
  if (!decision.allowed) {
    const seconds = String(decision.retryAfterSec);
    throw new AuthError("RATE_LIMITED", { headers: { "retry-after": seconds, "x-retry-after": seconds } });
  }
}
