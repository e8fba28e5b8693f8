import type { ServerResponse } from "node:http";
import type { App } from "../src/app.ts";
import { actionLink } from "../src/mail/links.ts";
import { toAuthError } from "../src/trpc/init.ts";

export { prefersHtml } from "../src/http/accept.ts";

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

/**
 * A page with a form (Effects.page: the magic link's confirm page): the same static lock, except
 * that its form may post to us and the answer may redirect to `formAction`'s origins (browsers
 * check form-action on the redirect after a submission too), and its referrer policy is
 * same-origin: under no-referrer a browser sends `Origin: null` with the form's POST (Fetch
 * §3.1 "append a request Origin header"), which the login CSRF check refuses; same-origin still
 * sends the page's URL (it carries the token) to no one but us.
 */
export function sendPage(res: ServerResponse, page: { html: string; formAction: string[] }, headers: Record<string, string | string[]> = {}) {
  const formAction = ["'self'", ...new Set(page.formAction)].join(" ");
  const csp = HTML_HEADERS["content-security-policy"].replace("form-action 'none'", `form-action ${formAction}`);
  res.writeHead(200, {
    ...headers,
    ...HTML_HEADERS,
    "content-security-policy": csp,
    "referrer-policy": "same-origin",
    "content-length": Buffer.byteLength(page.html),
  });
  res.end(page.html);
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
