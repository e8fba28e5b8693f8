import type { ServerResponse } from "node:http";
import type { App } from "../../app.ts";
import { sendScriptPage, type ScriptPage } from "../../security/script-page.ts";
import { accountPage } from "./account-page.ts";
import { accountPagePath, consentPagePath, signInPagePath } from "./oidc-provider.rules.ts";
import { signInPage } from "./sign-in-page.ts";

/**
 * The built-in pages of the authorization flow and the user's account (docs/oidc-provider.md
 * "Pages"), on the pages' shell (security/script-page.ts) like /device. The consent page reads
 * `oauth_query` from the URL and only ever sets textContent.
 */

const CONSENT_SCRIPT = `
  const oauthQuery = location.search.slice(1);
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
  const go = (r) => { if (r.ok && r.data && r.data.url) location.assign(r.data.url); else say(failure(r)); };
  const decide = async (accept) => go(await call("POST", "/oauth2/consent", { accept, oauth_query: oauthQuery }));
  $("allow").addEventListener("click", () => decide(true));
  $("deny").addEventListener("click", () => decide(false));
`;

const CONSENT_BODY = `<h1 id="title" tabindex="-1">Allow <span id="client-name">this application</span>?</h1>
<p id="status" role="status" aria-live="polite"></p>
<p id="client-uri"></p>
<p class="warn">Only allow applications you trust. This application will be able to:</p>
<ul id="scopes"></ul>
<button class="primary" type="button" id="allow" disabled>Allow</button>
<button type="button" id="deny">Deny</button>`;

const consentPage: ScriptPage = {
  title: "Allow access",
  style: `.warn{padding:.5rem;border-left:4px solid #b45309;background:#fff7ed}`,
  body: CONSENT_BODY,
  script: CONSENT_SCRIPT,
};

/** GET {public URL}/sign-in, /consent and /account; false when `path` is none (or the provider is off). */
export function serveOidcPage(app: App, path: string, res: ServerResponse): boolean {
  if (!app.config.oidcProvider.enabled) return false;
  const page =
    path === signInPagePath(app.config) ? signInPage(app)
    : path === consentPagePath(app.config) ? consentPage
    : path === accountPagePath(app.config) ? accountPage
    : null;
  if (!page) return false;
  sendScriptPage(res, app.config.basePath, page);
  return true;
}
