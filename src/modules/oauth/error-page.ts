import { ERRORS } from "../../errors.ts";
import { escapeHtml } from "../../security/html.ts";

/**
 * GET {base}/error?error=CODE (docs/wire-contract.md §9, better-auth's error page): where a browser lands
 * when an OAuth callback fails and the flow named no errorCallbackURL. Static HTML with no script;
 * the bridge sends it with a CSP that allows none. The code comes from the URL, so anyone can
 * link here with any text: it is escaped, cut short, and the message beside it is ours, never
 * words taken from the request.
 */

const MAX_CODE_LENGTH = 64;

const GENERIC_MESSAGE = "Signing in could not be completed. Please go back and try again.";

/** Our codes' public messages (own keys only: `__proto__`, `constructor` are just unknown codes). */
function messageFor(code: string): string {
  if (Object.hasOwn(ERRORS, code)) return ERRORS[code as keyof typeof ERRORS][1].replace(/([^.])$/, "$1.");
  // RFC 6749 §4.1.2.1: the user said no at the provider.
  return code === "access_denied" ? "The sign-in was cancelled at the provider." : GENERIC_MESSAGE;
}

const STYLE = "body{font:16px/1.5 system-ui,sans-serif;max-width:32rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}code{font-family:ui-monospace,monospace;background:#f2f2f2;padding:.1rem .3rem;border-radius:3px;word-break:break-all}";

export function renderErrorPage(rawCode: string | undefined): string {
  const code = (rawCode || "UNKNOWN").slice(0, MAX_CODE_LENGTH);
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">',
    '<meta name="referrer" content="no-referrer"><meta name="robots" content="noindex">',
    `<title>Sign-in error</title><style>${STYLE}</style></head>`,
    "<body><main>",
    "<h1>Sign-in error</h1>",
    `<p>${escapeHtml(messageFor(code))}</p>`,
    `<p>Error code: <code>${escapeHtml(code)}</code></p>`,
    '<p><a href="/">Back to the start</a></p>',
    "</main></body></html>",
  ].join("\n");
}
