import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import { escapeHtml } from "./html.ts";

/**
 * The shell of the built-in pages that run one script (the device page, the OpenID provider's
 * sign-in, consent and account pages): plain HTML, one inline style and one inline script under
 * a per-response nonce CSP, calling the REST bridge with the session cookie. Nothing from the
 * request is written into the HTML: a page's script reads its URL and only ever sets textContent.
 */

export const BASE_STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #555;border-radius:4px}
button{font:inherit;margin:1rem .5rem 0 0;padding:.5rem 1rem;border-radius:4px;border:1px solid #222;cursor:pointer}
[hidden]{display:none}
button.primary{background:#1f4fd1;color:#fff;border-color:#1f4fd1}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
h1:focus,h2:focus{outline:none}
#status:empty{display:none}#status{padding:.5rem;border-left:4px solid #1f4fd1;background:#eef2ff}
`;

/**
 * The helpers every page script starts with: `api` (the base path), `$`, `say` (the status
 * line), `call` (JSON over fetch with the cookie) and `failure` (the message of an error answer:
 * `{ code, message }` from most endpoints, RFC 6749 `{ error, error_description }` from OAuth's).
 */
export const COMMON_SCRIPT = `
const api = document.body.dataset.api;
const $ = (id) => document.getElementById(id);
const say = (text) => { $("status").textContent = text; };
async function call(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { accept: "application/json" } };
  if (body) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(api + path, init);
  let data = null;
  try { data = await res.json(); } catch {}
  return { ok: res.ok, status: res.status, data };
}
const failure = (r) => (r.data && (r.data.message || r.data.error_description)) || "Something went wrong. Please try again.";
`;

/** The email-and-password form of the pages that sign in (its script posts /sign-in/email). */
export const SIGN_IN_FORM = `<form id="sign-in-form">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button class="primary" type="submit">Sign in</button>
</form>`;

export interface ScriptPage {
  title: string;
  /** Extra rules after BASE_STYLE. */
  style?: string;
  /** The content of <main> (static markup: nothing from the request). */
  body: string;
  /** Runs after COMMON_SCRIPT, in the same function scope. */
  script: string;
}

export function renderScriptPage(nonce: string, apiBase: string, page: ScriptPage): string {
  const n = escapeHtml(nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(page.title)}</title>
<style nonce="${n}">${BASE_STYLE}${page.style ?? ""}</style>
</head>
<body data-api="${escapeHtml(apiBase)}">
<main>
${page.body}
<noscript><p>This page needs JavaScript.</p></noscript>
</main>
<script nonce="${n}">(() => {${COMMON_SCRIPT}${page.script}})();</script>
</body>
</html>
`;
}

/**
 * 200 with the page under a strict CSP: only its own nonced script and style, fetches to our
 * origin; never framed (its buttons approve, allow and revoke: clickjacking), cached or sniffed.
 */
export function sendScriptPage(res: ServerResponse, apiBase: string, page: ScriptPage): void {
  const nonce = randomBytes(16).toString("base64");
  const html = renderScriptPage(nonce, apiBase, page);
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(html);
}
