import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../src/app.ts";

/**
 * CORS (https://fetch.spec.whatwg.org/#http-cors-protocol) for browser apps on the origins in
 * `trustedOrigins` (and our own): credentialed requests to the REST bridge and /api/trpc.
 * A trusted Origin gets its exact origin back with credentials allowed (never `*`, which
 * credentialed requests may not use); any other origin gets no CORS header at all, so the
 * browser keeps the answer from its page and refuses to send what needs a preflight.
 */

/** What a page may read of an answer: the bearer token headers, and the log reference. */
export const EXPOSED_HEADERS = "set-auth-token, set-auth-jwt, x-request-id";
const ALLOWED_METHODS = "GET, HEAD, POST";
/** Request headers a page may send beyond the CORS-safelisted ones. */
const ALLOWED_HEADERS = new Set(["content-type", "authorization", "x-request-id", "accept", "accept-language", "content-language", "trpc-accept", "x-trpc-source"]);
/** Seconds a browser may reuse a preflight (Chromium caps it at 7200): a removed origin loses its answers at once anyway. */
const MAX_AGE_SEC = "600";

/** The requested headers we allow, as the browser listed them (lower-cased), or null for none. */
function allowedHeaders(requested: string | undefined): string | null {
  if (!requested) return null;
  const allowed = requested
    .split(",")
    .map((h) => h.trim().toLowerCase())
    .filter((h) => ALLOWED_HEADERS.has(h));
  return allowed.length ? allowed.join(", ") : null;
}

/**
 * Built once per handler (the config does not change). The returned function is called only
 * for requests that carry an `Origin`; it returns true when it has answered the request itself
 * (a preflight), false when the request goes on, with the CORS headers set on `res` when the
 * origin is trusted (every later writeHead keeps them).
 */
export function createCors(app: App, trpcPath: string) {
  const trusted = new Set([app.origin, ...app.config.trustedOrigins.map((o) => new URL(o).origin)]);
  const base = `${app.config.basePath}/`;
  const covers = (url: string) => url.startsWith(base) || url === trpcPath || url.startsWith(`${trpcPath}/`) || url.startsWith(`${trpcPath}?`);

  return function cors(req: IncomingMessage, res: ServerResponse, origin: string): boolean {
    if (!trusted.has(origin) || !covers(req.url ?? "")) return false;
    const preflightMethod = req.headers["access-control-request-method"];
    if (req.method === "OPTIONS" && preflightMethod !== undefined) {
      const headers: Record<string, string> = {
        "access-control-allow-origin": origin,
        "access-control-allow-credentials": "true",
        "access-control-allow-methods": ALLOWED_METHODS,
        "access-control-max-age": MAX_AGE_SEC,
        vary: "Origin, Access-Control-Request-Method, Access-Control-Request-Headers",
        "content-length": "0",
      };
      const requested = req.headers["access-control-request-headers"];
      const allowed = allowedHeaders(Array.isArray(requested) ? requested.join(",") : requested);
      if (allowed) headers["access-control-allow-headers"] = allowed;
      res.writeHead(204, headers);
      res.end();
      return true;
    }
    res.setHeader("access-control-allow-origin", origin);
    res.setHeader("access-control-allow-credentials", "true");
    res.setHeader("access-control-expose-headers", EXPOSED_HEADERS);
    res.setHeader("vary", "Origin");
    return false;
  };
}

/**
 * tRPC's adapter writes its own `Vary: trpc-accept, accept` over the one set above; its
 * responseMeta adds Origin back (only where this module answered a trusted origin).
 */
export function trpcVary(res: ServerResponse): Record<string, string> {
  return res.hasHeader("access-control-allow-origin") ? { vary: "trpc-accept, accept, Origin" } : {};
}
