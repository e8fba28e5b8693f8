import type { ServerResponse } from "node:http";
import type { App } from "../../app.ts";
import { escapeHtml } from "../../security/html.ts";
import { sendScriptPage, SIGN_IN_FORM } from "../../security/script-page.ts";

/**
 * The built-in verification page (RFC 8628 §3.3) on the pages' shell (security/script-page.ts):
 * the script reads `user_code` from the URL and only ever sets textContent.
 */

const STYLE = `
#user-code{font-family:ui-monospace,monospace;letter-spacing:.15em;text-transform:uppercase}
.code{font-family:ui-monospace,monospace;font-size:1.5rem;letter-spacing:.15em}
`;

const SCRIPT = `
  let code = new URLSearchParams(location.search).get("user_code") || "";
  function show(id) {
    for (const s of document.querySelectorAll("main > section")) s.hidden = s.id !== id;
    const heading = $(id).querySelector("h2");
    if (heading) heading.focus();
  }
  const link = $("sign-in-link");
  if (!link.getAttribute("href").startsWith("#")) {
    // An operator's sign-in page: come back here (with the code) afterwards.
    const target = new URL(link.href);
    target.searchParams.set("callbackURL", location.href);
    link.href = target.toString();
  }
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
`;

const body = (signInHref: string) => `<h1>Connect a device</h1>
<p id="status" role="status" aria-live="polite"></p>
<section id="sign-in" hidden>
<h2 tabindex="-1">Sign in</h2>
<p>You need to be signed in to connect a device. <a id="sign-in-link" href="${escapeHtml(signInHref)}">Sign in</a></p>
${SIGN_IN_FORM}
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
</section>`;

/** GET {public URL}/device: the page, with a per-response nonce and a strict CSP (its URL carries the user code). */
export function sendDevicePage(app: App, res: ServerResponse): void {
  const signInUrl = app.config.deviceAuthorization.signInUrl;
  sendScriptPage(res, app.config.basePath, { title: "Connect a device", style: STYLE, body: body(signInUrl ?? "#sign-in-form"), script: SCRIPT });
}
