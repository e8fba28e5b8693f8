import type { ServerResponse } from "node:http";
import type { App } from "../src/app.ts";
import { actionLink } from "../src/mail/links.ts";
import { toAuthError } from "../src/trpc/init.ts";

/**
 * The bridge's HTML answers (the OAuth error page) and the browser-navigation rule that sends a
 * failed callback there. Pages are static: no script may run, nothing is loaded, they are not
 * framed, cached or sniffed as another type.
 */
const HTML_HEADERS = {
  "content-type": "text/html; charset=utf-8",
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
};

export function sendHtml(res: ServerResponse, html: string, headers: Record<string, string | string[]> = {}) {
  res.writeHead(200, { ...headers, ...HTML_HEADERS, "content-length": Buffer.byteLength(html) });
  res.end(html);
}

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

function mediaRanges(accept: string): MediaRange[] {
  return accept.split(",").flatMap((part) => {
    const [range = "", ...params] = part.split(";").map((p) => p.trim().toLowerCase());
    const [type, subtype] = range.split("/");
    if (!type || !subtype) return [];
    const qParam = params.find((p) => p.startsWith("q="));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    return Number.isFinite(q) ? [{ type, subtype, q: Math.min(Math.max(q, 0), 1) }] : [];
  });
}

/** RFC 9110 §12.5.1: the weight of the most specific range that matches `mime` (0 when none does). */
function weight(ranges: MediaRange[], mime: string): number {
  const [type, subtype] = mime.split("/");
  let best: { specificity: number; q: number } = { specificity: -1, q: 0 };
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === "*" ? 1 : r.type === "*" && r.subtype === "*" ? 0 : -1;
    if (specificity > best.specificity) best = { specificity, q: r.q };
  }
  return best.q;
}

/**
 * A browser navigation: its Accept weighs text/html above JSON (browsers send
 * `text/html,…,*\/*;q=0.8`). No Accept, `*\/*` or a JSON client keeps the JSON answers.
 */
export function prefersHtml(accept: string | string[] | undefined): boolean {
  const value = Array.isArray(accept) ? accept.join(",") : accept;
  if (!value) return false;
  const ranges = mediaRanges(value);
  return weight(ranges, "text/html") > weight(ranges, "application/json");
}

/**
 * A browser's failed callback goes to better-auth's default error URL, `{public URL}{base}/error?error=CODE`,
 * with the code JSON would have carried. Unexpected failures are logged here, as server.ts would.
 */
export function failureToErrorPage(app: App, res: ServerResponse, err: unknown, requestId: string) {
  const auth = toAuthError(err);
  if (auth.authCode === "INTERNAL_SERVER_ERROR") app.logger.error({ requestId, err: auth.cause }, "unexpected failure");
  res.writeHead(302, { location: actionLink(app, "/error", { error: auth.wireCode }), "cache-control": "no-store" });
  res.end();
}
