import type { App } from "../../app.ts";
import { escapeHtml } from "../../security/html.ts";
import { SIGN_IN_FORM, type ScriptPage } from "../../security/script-page.ts";

/**
 * The built-in sign-in page: email and password (then two-factor when the account has it), a
 * passkey, or a configured social provider. Reached two ways:
 * - from /oauth2/authorize with the signed `oauth_query` as its query: once signed in, POST
 *   /oauth2/continue resumes the authorize request;
 * - from /account with `?next=/account`: once signed in, back there (a same-origin path only).
 * A social sign-in sends the `oauth_query` along: the provider's callback then goes straight on
 * with the authorize request. It comes back to this page (its callbackURL is this URL with
 * `#continue`) only when a second step is due, or from `?next=`, and resumes as above; a failure
 * comes back to this URL (errorCallbackURL). The provider's callback may add `twoFactorRedirect`
 * or `error` to the query: they are read and dropped before the query goes back as `oauth_query`.
 */

const SCRIPT = `
  const query = new URLSearchParams(location.search);
  const returned = { error: query.get("error"), twoFactor: query.get("twoFactorRedirect") === "true" };
  query.delete("error"); query.delete("error_description"); query.delete("twoFactorRedirect");
  const oauthQuery = query.get("sig") ? query.toString() : null;
  // Only a same-origin path: never an open redirect.
  const nextPath = !oauthQuery && /^\\/[A-Za-z0-9\\/_-]*$/.test(query.get("next") || "") && !query.get("next").startsWith("//") ? query.get("next") : null;
  const here = location.pathname + location.search;
  function go(r) { if (r.ok && r.data && r.data.url) location.assign(r.data.url); else say(failure(r)); }
  async function done() {
    if (oauthQuery) go(await call("POST", "/oauth2/continue", { oauth_query: oauthQuery, postLogin: true }));
    else location.assign(nextPath || "/");
  }
  function askSecondStep() {
    // The second step (docs/two-factor-and-passkeys.md): the sign-in left a two-factor cookie; a code completes it.
    $("sign-in-form").hidden = true;
    $("other-ways").hidden = true;
    $("two-factor-form").hidden = false;
    say("This account uses two-factor authentication. Enter the code from your authenticator app, or a backup code.");
    $("code").focus();
  }
  if (oauthQuery) $("intro").hidden = false;
  $("sign-in-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    say("");
    const r = await call("POST", "/sign-in/email", { email: $("email").value, password: $("password").value });
    $("password").value = "";
    if (!r.ok) { say(failure(r)); return; }
    if (r.data && r.data.twoFactorRedirect) { askSecondStep(); return; }
    await done();
  });
  $("two-factor-form").addEventListener("submit", async (e) => {
    e.preventDefault();
    say("");
    const code = $("code").value.trim();
    const r = await call("POST", /^[0-9]{6}$/.test(code) ? "/two-factor/verify-totp" : "/two-factor/verify-backup-code", { code });
    $("code").value = "";
    if (!r.ok) { say(failure(r)); $("code").focus(); return; }
    await done();
  });
  // WebAuthn JSON (W3C WebAuthn L3 §5.1.4) by hand: base64url to bytes and back.
  const bytes = (s) => Uint8Array.from(atob(s.replace(/-/g, "+").replace(/_/g, "/")), (c) => c.charCodeAt(0));
  const b64url = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf))).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
  const passkeyButton = $("passkey");
  if (passkeyButton && window.PublicKeyCredential) passkeyButton.addEventListener("click", async () => {
    say("");
    const o = await call("GET", "/passkey/generate-authenticate-options");
    if (!o.ok) { say(failure(o)); return; }
    const opts = o.data;
    let cred;
    try {
      cred = await navigator.credentials.get({ publicKey: {
        challenge: bytes(opts.challenge), rpId: opts.rpId, timeout: opts.timeout, userVerification: opts.userVerification,
        allowCredentials: (opts.allowCredentials || []).map((c) => ({ type: c.type, id: bytes(c.id), transports: c.transports })),
      } });
    } catch { say("The passkey sign-in was cancelled or failed. Please try again."); return; }
    const a = cred.response;
    const r = await call("POST", "/passkey/verify-authentication", { response: {
      id: cred.id, rawId: b64url(cred.rawId), type: cred.type, authenticatorAttachment: cred.authenticatorAttachment || undefined,
      response: { clientDataJSON: b64url(a.clientDataJSON), authenticatorData: b64url(a.authenticatorData), signature: b64url(a.signature), userHandle: a.userHandle ? b64url(a.userHandle) : undefined },
    } });
    if (!r.ok) { say(failure(r)); return; }
    await done();
  });
  else if (passkeyButton) passkeyButton.hidden = true;
  for (const button of document.querySelectorAll("button[data-provider]")) button.addEventListener("click", async () => {
    say("");
    // The callback continues the authorize request itself (oauth_query); back to this very page
    // (the #continue below) only for a second step, or when there is no request (?next=).
    const r = await call("POST", "/sign-in/social", { provider: button.dataset.provider, callbackURL: here + "#continue", errorCallbackURL: here, disableRedirect: true, oauth_query: oauthQuery || undefined });
    if (r.ok && r.data && r.data.url) location.assign(r.data.url); else say(failure(r));
  });
  if (returned.error) say("The sign-in with that provider did not complete (" + returned.error + "). Please try again.");
  if (location.hash === "#continue") {
    history.replaceState(null, "", location.pathname + "?" + query.toString());
    if (returned.twoFactor) askSecondStep();
    else done().catch(() => say("Could not reach the server. Please reload the page."));
    return;
  }
  // OIDC Core §3.1.2.1 login_hint: the address the client suggests, prefilled.
  const hint = query.get("login_hint");
  if (hint && hint.length <= 320) $("email").value = hint;
  $(hint ? "password" : "email").focus();
`;

/** A built-in provider's name as people know it; an `oauth2` provider goes by its configured name. */
const BRANDS: Record<string, string> = { google: "Google", github: "GitHub", discord: "Discord" };

function otherWays(app: App): string {
  const buttons: string[] = [];
  if (app.config.passkey.enabled) buttons.push(`<button type="button" id="passkey">Sign in with a passkey</button>`);
  for (const [name, provider] of Object.entries(app.config.providers ?? {})) {
    const label = provider.type === "oauth2" ? name : (BRANDS[provider.type] ?? name);
    buttons.push(`<button type="button" data-provider="${escapeHtml(name)}">Continue with ${escapeHtml(label)}</button>`);
  }
  return buttons.length ? `<div id="other-ways"><p>Or:</p>\n${buttons.join("\n")}\n</div>` : `<div id="other-ways"></div>`;
}

export function signInPage(app: App): ScriptPage {
  const body = `<h1 tabindex="-1">Sign in</h1>
<p id="status" role="status" aria-live="polite"></p>
<p id="intro" hidden>An application asks you to sign in.</p>
${SIGN_IN_FORM}
${otherWays(app)}
<form id="two-factor-form" hidden>
<label for="code">Two-factor code</label>
<input id="code" name="code" autocomplete="one-time-code" spellcheck="false" required>
<button class="primary" type="submit">Verify</button>
</form>`;
  return { title: "Sign in", body, script: SCRIPT };
}
