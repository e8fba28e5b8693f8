import type { ScriptPage } from "../../security/script-page.ts";

/**
 * The built-in account page: the applications the user allowed (their OAuth consents: name,
 * scopes, when) and the user's signed-in sessions, each with a revoke button. It only calls the
 * user's own endpoints (/oauth2/get-consents, /oauth2/delete-consent, /list-sessions,
 * /revoke-session); revoking an application ends its tokens too (docs/oidc-provider.md "What
 * ends a grant"). Without a session it sends the browser to the sign-in page and back.
 */

const STYLE = `
body{max-width:40rem}
ul.rows{list-style:none;padding:0}
ul.rows li{border:1px solid #ccc;border-radius:4px;padding:.5rem .75rem;margin:.5rem 0}
ul.rows li button{margin-top:.5rem}
.meta{color:#444;font-size:.9rem}
`;

const SCRIPT = `
  const signIn = location.pathname.replace(/\\/account$/, "/sign-in");
  const when = (iso) => new Date(iso).toLocaleString();
  function row(list, title, lines, label, revoke) {
    const li = document.createElement("li");
    const name = document.createElement("strong");
    name.textContent = title;
    li.appendChild(name);
    for (const line of lines) {
      const p = document.createElement("div");
      p.className = "meta";
      p.textContent = line;
      li.appendChild(p);
    }
    if (revoke) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = "Revoke";
      b.setAttribute("aria-label", label);
      b.addEventListener("click", async () => {
        b.disabled = true;
        const r = await revoke();
        if (!r.ok) { b.disabled = false; say(failure(r)); return; }
        li.remove();
        say(label.replace(/^Revoke/, "Revoked") + ".");
        $(list.dataset.heading).focus();
        if (!list.children.length) $(list.dataset.empty).hidden = false;
      });
      li.appendChild(b);
    }
    list.appendChild(li);
  }
  async function clientName(clientId) {
    const r = await call("GET", "/oauth2/public-client?client_id=" + encodeURIComponent(clientId));
    return (r.ok && r.data && r.data.client_name) || clientId;
  }
  async function load() {
    const session = await call("GET", "/get-session");
    if (!session.ok || !session.data) { location.assign(signIn + "?next=" + encodeURIComponent(location.pathname)); return; }
    $("who").textContent = session.data.user.email;
    const [consents, sessions] = await Promise.all([call("GET", "/oauth2/get-consents"), call("GET", "/list-sessions")]);
    if (!consents.ok || !sessions.ok) { say(failure(consents.ok ? sessions : consents)); return; }
    const apps = $("apps");
    for (const c of consents.data) {
      const name = await clientName(c.clientId);
      row(apps, name, ["Can: " + c.scopes.join(", "), "Allowed " + when(c.createdAt)], "Revoke " + name,
        () => call("POST", "/oauth2/delete-consent", { id: c.id }));
    }
    $("no-apps").hidden = consents.data.length > 0;
    const list = $("sessions");
    for (const s of sessions.data) {
      const current = s.id === session.data.session.id;
      const device = s.userAgent || "Unknown device";
      row(list, current ? device + " (this browser)" : device, [(s.ipAddress ? s.ipAddress + ", " : "") + "signed in " + when(s.createdAt)],
        "Revoke session on " + device, current ? null : () => call("POST", "/revoke-session", { token: s.token }));
    }
    $("content").hidden = false;
    $("title").focus();
  }
  load().catch(() => say("Could not reach the server. Please reload the page."));
`;

const BODY = `<h1 id="title" tabindex="-1">Your account</h1>
<p id="status" role="status" aria-live="polite"></p>
<div id="content" hidden>
<p>Signed in as <strong id="who"></strong>.</p>
<h2 id="apps-title" tabindex="-1">Connected applications</h2>
<p id="no-apps" hidden>No application has access to your account.</p>
<ul class="rows" id="apps" data-heading="apps-title" data-empty="no-apps"></ul>
<h2 id="sessions-title" tabindex="-1">Signed-in sessions</h2>
<p id="no-sessions" hidden>No other session.</p>
<ul class="rows" id="sessions" data-heading="sessions-title" data-empty="no-sessions"></ul>
</div>`;

export const accountPage: ScriptPage = { title: "Your account", style: STYLE, body: BODY, script: SCRIPT };
