import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { App } from "../../app.ts";
import { escapeHtml } from "../../security/html.ts";

/**
 * The built-in verification page (RFC 8628 §3.3): plain HTML and one inline script calling the
 * REST bridge with the session cookie. Nothing from the request is written into the HTML; the
 * script reads `user_code` from the URL and only ever sets textContent.
 */

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #555;border-radius:4px}
#user-code{font-family:ui-monospace,monospace;letter-spacing:.15em;text-transform:uppercase}
button{font:inherit;margin:1rem .5rem 0 0;padding:.5rem 1rem;border-radius:4px;border:1px solid #222;cursor:pointer}
button.primary{background:#1f4fd1;color:#fff;border-color:#1f4fd1}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
h2:focus{outline:none}
.code{font-family:ui-monospace,monospace;font-size:1.5rem;letter-spacing:.15em}
#status:empty{display:none}#status{padding:.5rem;border-left:4px solid #1f4fd1;background:#eef2ff}
`;

const SCRIPT = `
(() => {
  const api = document.body.dataset.api;
  const $ = (id) => document.getElementById(id);
  const status = $("status");
  let code = new URLSearchParams(location.search).get("user_code") || "";
  const say = (text) => { status.textContent = text; };
  function show(id) {
    for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== id;
    const heading = $(id).querySelector("h2");
    if (heading) heading.focus();
  }
  async function call(method, path, body) {
    const init = { method, credentials: "same-origin", headers: { accept: "application/json" } };
    if (body) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
    const res = await fetch(api + path, init);
    let data = null;
    try { data = await res.json(); } catch {}
    return { ok: res.ok, status: res.status, data };
  }
  const link = $("sign-in-link");
  if (!link.getAttribute("href").startsWith("#")) {
    // An operator's sign-in page: come back here (with the code) afterwards.
    const target = new URL(link.href);
    target.searchParams.set("callbackURL", location.href);
    link.href = target.toString();
  }
  // { code, message } from most endpoints; approve and deny answer RFC 6749 { error, error_description }.
  const failure = (r) => (r.data && (r.data.message || r.data.error_description)) || "Something went wrong. Please try again.";
  async function start() {
    const session = await call("GET", "/get-session");
    if (!session.ok || !session.data) { show("sign-in"); return; }
    $("who").textContent = session.data.user.email;
    $("user-code").value = code;
    if (code) await lookUp(code); else show("enter-code");
  }
  async function lookUp(value) {
    const r = await call("GET", "/device?user_code=" + encodeURIComponent(value));
    if (!r.ok) { show("enter-code"); say(failure(r)); return; }
    code = r.data.user_code;
    if (r.data.status !== "pending") { show("enter-code"); say("This code has already been used."); return; }
    say("");
    $("confirm-code").textContent = code;
    show("confirm");
  }
  async function decide(path, done) {
    const r = await call("POST", path, { userCode: code });
    if (!r.ok) { say(failure(r)); return; }
    $("done-text").textContent = done;
    say("");
    show("done");
  }
  $("sign-in-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    const r = await call("POST", "/sign-in/email", { email: $("email").value, password: $("password").value });
    if (!r.ok) { say(failure(r)); return; }
    $("password").value = "";
    say("");
    await start();
  });
  $("code-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    await lookUp($("user-code").value);
  });
  $("approve").addEventListener("click", () => decide("/device/approve", "Device connected. You can return to your device."));
  $("deny").addEventListener("click", () => decide("/device/deny", "Request denied. The device was not connected."));
  start().catch(() => say("Could not reach the server. Please reload the page."));
})();
`;

export function renderDevicePage(opts: { nonce: string; apiBase: string; signInHref: string }): string {
  const nonce = escapeHtml(opts.nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>Connect a device</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body data-api="${escapeHtml(opts.apiBase)}">
<main>
<h1>Connect a device</h1>
<p id="status" role="status" aria-live="polite"></p>
<noscript><p>This page needs JavaScript.</p></noscript>
<section id="sign-in" hidden>
<h2 tabindex="-1">Sign in</h2>
<p>You need to be signed in to connect a device. <a id="sign-in-link" href="${escapeHtml(opts.signInHref)}">Sign in</a></p>
<form id="sign-in-form">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button class="primary" type="submit">Sign in</button>
</form>
</section>
<section id="enter-code" hidden>
<h2 tabindex="-1">Enter the code</h2>
<p>Signed in as <strong id="who"></strong>. Enter the code shown on your device.</p>
<form id="code-form">
<label for="user-code">Code</label>
<input id="user-code" name="user_code" autocomplete="one-time-code" autocapitalize="characters" spellcheck="false" maxlength="12" placeholder="XXXX-XXXX" required>
<button class="primary" type="submit">Continue</button>
</form>
</section>
<section id="confirm" hidden>
<h2 tabindex="-1">Allow this device?</h2>
<p>Check that your device shows this code:</p>
<p class="code" id="confirm-code"></p>
<p>Approving signs the device in to your account.</p>
<button class="primary" type="button" id="approve">Approve</button>
<button type="button" id="deny">Deny</button>
</section>
<section id="done" hidden>
<h2 tabindex="-1">Done</h2>
<p id="done-text"></p>
</section>
</main>
<script nonce="${nonce}">${SCRIPT}</script>
</body>
</html>
`;
}

/** GET {public URL}/device: the page, with a per-response nonce and a strict CSP. */
export function sendDevicePage(app: App, res: ServerResponse): void {
  const nonce = randomBytes(16).toString("base64");
  const signInUrl = app.config.deviceAuthorization.signInUrl;
  const html = renderDevicePage({ nonce, apiBase: app.config.basePath, signInHref: signInUrl ?? "#sign-in-form" });
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    // The approve button must not be framed (clickjacking); the URL carries the user code.
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(html);
}
