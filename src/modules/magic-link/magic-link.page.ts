import { escapeHtml } from "../../security/html.ts";

/**
 * The confirm page a browser gets for a magic link (`magicLink.confirmPage`, docs/passwordless.md):
 * mail scanners and link previews fetch links, and a GET that signed in would use the link up
 * before its owner clicks. The page is a plain form whose button POSTs the token back: no script
 * (it works without JavaScript and under the bridge's script-free CSP, rest-bridge/html.ts
 * sendPage), every value escaped, never framed, the referrer (its URL carries the token) sent to us only.
 */

const STYLE =
  "body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem;color:#1a1a1a}" +
  "button{font:inherit;margin-top:1rem;padding:.5rem 1.25rem;border-radius:4px;border:1px solid #1f4fd1;background:#1f4fd1;color:#fff;cursor:pointer}" +
  ":focus-visible{outline:3px solid #f5a623;outline-offset:2px}";

export interface ConfirmPage {
  /** Where the form posts: `{basePath}/magic-link/verify`. */
  action: string;
  /** The address the link signs in as (it came in the mail to that address). */
  email: string;
  /** The link's query: the token and its callback URLs, posted back as they came. */
  fields: Record<string, string | undefined>;
}

export function renderConfirmPage(page: ConfirmPage): string {
  const hidden = Object.entries(page.fields)
    .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== "")
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`);
  return [
    "<!doctype html>",
    '<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">',
    '<meta name="referrer" content="same-origin"><meta name="robots" content="noindex">',
    `<title>Sign in</title><style>${STYLE}</style></head>`,
    "<body><main>",
    "<h1>Sign in</h1>",
    `<p>Sign in as <strong>${escapeHtml(page.email)}</strong>?</p>`,
    `<form method="post" action="${escapeHtml(page.action)}">`,
    ...hidden,
    '<button type="submit">Sign in</button>',
    "</form>",
    "<p><small>The link works once. If you did not ask to sign in, close this page.</small></p>",
    "</main></body></html>",
  ].join("\n");
}
