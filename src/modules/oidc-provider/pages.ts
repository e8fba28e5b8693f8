import { randomBytes } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { App } from "../../app.ts";
import { escapeHtml } from "../../security/html.ts";
import { consentPagePath, signInPagePath } from "./oidc-provider.rules.ts";

/**
 * The built-in sign-in and consent pages of the authorization flow (docs/oidc-provider.md
 * "Pages"), server-rendered like /device: plain HTML and one inline script under a nonce CSP,
 * calling the REST bridge with the session cookie. Nothing from the request is written into the
 * HTML; the script reads `oauth_query` from the URL and only ever sets textContent.
 */

const STYLE = `
body{font:16px/1.5 system-ui,sans-serif;max-width:28rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
label{display:block;margin:.75rem 0 .25rem;font-weight:600}
input{font:inherit;width:100%;box-sizing:border-box;padding:.5rem;border:1px solid #555;border-radius:4px}
button{font:inherit;margin:1rem .5rem 0 0;padding:.5rem 1rem;border-radius:4px;border:1px solid #222;cursor:pointer}
[hidden]{display:none}
button.primary{background:#1f4fd1;color:#fff;border-color:#1f4fd1}
:focus-visible{outline:3px solid #f5a623;outline-offset:2px}
h1:focus{outline:none}
.warn{padding:.5rem;border-left:4px solid #b45309;background:#fff7ed}
#status:empty{display:none}#status{padding:.5rem;border-left:4px solid #1f4fd1;background:#eef2ff}
`;

const COMMON = `
const api = document.body.dataset.api;
const $ = (id) => document.getElementById(id);
const say = (text) => { $("status").textContent = text; };
const oauthQuery = location.search.slice(1);
async function call(method, path, body) {
  const init = { method, credentials: "same-origin", headers: { accept: "application/json" } };
  if (body) { init.headers["content-type"] = "application/json"; init.body = JSON.stringify(body); }
  const res = await fetch(api + path, init);
  let data = null;
  try { data = await res.json(); } catch {}
  return { ok: res.ok, status: res.status, data };
}
const failure = (r) => (r.data && (r.data.message || r.data.error_description)) || "Something went wrong. Please try again.";
function go(r) { if (r.ok && r.data && r.data.url) location.assign(r.data.url); else say(failure(r)); }
`;

const SIGN_IN_SCRIPT = `
(() => {
${COMMON}
  $("sign-in-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    say("");
    const r = await call("POST", "/sign-in/email", { email: $("email").value, password: $("password").value });
    $("password").value = "";
    if (!r.ok) { say(failure(r)); return; }
    if (r.data && r.data.twoFactorRedirect) {
      // The second step (docs/two-factor-and-passkeys.md): the sign-in left a two-factor cookie; a code completes it.
      $("sign-in-form").hidden = true;
      $("two-factor-form").hidden = false;
      say("This account uses two-factor authentication. Enter the code from your authenticator app, or a backup code.");
      $("code").focus();
      return;
    }
    go(await call("POST", "/oauth2/continue", { oauth_query: oauthQuery, postLogin: true }));
  });
  $("two-factor-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    say("");
    const code = $("code").value.trim();
    const r = await call("POST", /^[0-9]{6}$/.test(code) ? "/two-factor/verify-totp" : "/two-factor/verify-backup-code", { code });
    $("code").value = "";
    if (!r.ok) { say(failure(r)); $("code").focus(); return; }
    go(await call("POST", "/oauth2/continue", { oauth_query: oauthQuery, postLogin: true }));
  });
  // OIDC Core §3.1.2.1 login_hint: the address the client suggests, prefilled.
  const hint = new URLSearchParams(oauthQuery).get("login_hint");
  if (hint && hint.length <= 320) $("email").value = hint;
  $(hint ? "password" : "email").focus();
})();
`;

const CONSENT_SCRIPT = `
(() => {
${COMMON}
  const params = new URLSearchParams(oauthQuery);
  const DESCRIPTIONS = { openid: "Know who you are", profile: "See your name and picture", email: "See your email address", offline_access: "Stay connected when you are not using it" };
  const list = $("scopes");
  for (const scope of (params.get("scope") || "").split(" ").filter(Boolean)) {
    const li = document.createElement("li");
    li.textContent = DESCRIPTIONS[scope] || scope;
    list.appendChild(li);
  }
  (async () => {
    const r = await call("GET", "/oauth2/public-client?client_id=" + encodeURIComponent(params.get("client_id") || ""));
    if (!r.ok) { say(failure(r)); return; }
    $("client-name").textContent = r.data.client_name || r.data.client_id;
    if (r.data.client_uri) $("client-uri").textContent = r.data.client_uri;
    $("allow").disabled = false;
    $("title").focus();
  })().catch(() => say("Could not reach the server. Please reload the page."));
  const decide = async (accept) => go(await call("POST", "/oauth2/consent", { accept, oauth_query: oauthQuery }));
  $("allow").addEventListener("click", () => decide(true));
  $("deny").addEventListener("click", () => decide(false));
})();
`;

function page(nonce: string, apiBase: string, title: string, body: string, script: string): string {
  const n = escapeHtml(nonce);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style nonce="${n}">${STYLE}</style>
</head>
<body data-api="${escapeHtml(apiBase)}">
<main>
${body}
</main>
<noscript><p>This page needs JavaScript.</p></noscript>
<script nonce="${n}">${script}</script>
</body>
</html>
`;
}

const SIGN_IN_BODY = `<h1 tabindex="-1">Sign in</h1>
<p id="status" role="status" aria-live="polite"></p>
<p>An application asks you to sign in.</p>
<form id="sign-in-form">
<label for="email">Email</label>
<input id="email" name="email" type="email" autocomplete="username" required>
<label for="password">Password</label>
<input id="password" name="password" type="password" autocomplete="current-password" required>
<button class="primary" type="submit">Sign in</button>
</form>
<form id="two-factor-form" hidden>
<label for="code">Two-factor code</label>
<input id="code" name="code" autocomplete="one-time-code" spellcheck="false" required>
<button class="primary" type="submit">Verify</button>
</form>`;

const CONSENT_BODY = `<h1 id="title" tabindex="-1">Allow <span id="client-name">this application</span>?</h1>
<p id="status" role="status" aria-live="polite"></p>
<p id="client-uri"></p>
<p class="warn">Only allow applications you trust. This application will be able to:</p>
<ul id="scopes"></ul>
<button class="primary" type="button" id="allow" disabled>Allow</button>
<button type="button" id="deny">Deny</button>`;

/** GET {public URL}/sign-in and /consent; false when `path` is neither (or the provider is off). */
export function serveOidcPage(app: App, path: string, res: ServerResponse): boolean {
  if (!app.config.oidcProvider.enabled) return false;
  const which = path === signInPagePath(app.config) ? "sign-in" : path === consentPagePath(app.config) ? "consent" : null;
  if (!which) return false;
  const nonce = randomBytes(16).toString("base64");
  const html =
    which === "sign-in"
      ? page(nonce, app.config.basePath, "Sign in", SIGN_IN_BODY, SIGN_IN_SCRIPT)
      : page(nonce, app.config.basePath, "Allow access", CONSENT_BODY, CONSENT_SCRIPT);
  res.writeHead(200, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(html),
    "cache-control": "no-store",
    "content-security-policy": `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'`,
    // The allow button must not be framed (clickjacking).
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "x-content-type-options": "nosniff",
  });
  res.end(html);
  return true;
}
