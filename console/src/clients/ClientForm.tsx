import { useState, type FormEvent } from "react";
import type { OAuthClient } from "../api.ts";

export interface ClientFormValues {
  client_name: string;
  redirect_uris: string[];
  skip_consent: boolean;
}

/**
 * Name, redirect URIs (one a line, matched exactly as written: docs/oidc-provider.md) and the
 * trusted flag (`skip_consent`: users are not asked to allow it). Create and edit share it.
 */
export function ClientForm({ initial, submitLabel, busy, onSubmit, children }: { initial?: OAuthClient; submitLabel: string; busy: boolean; onSubmit: (v: ClientFormValues) => void; children?: React.ReactNode }) {
  const [name, setName] = useState(initial?.client_name ?? "");
  const [uris, setUris] = useState((initial?.redirect_uris ?? []).join("\n"));
  const [trusted, setTrusted] = useState(initial?.skip_consent === true);
  function submit(event: FormEvent) {
    event.preventDefault();
    onSubmit({ client_name: name.trim(), redirect_uris: uris.split("\n").map((u) => u.trim()).filter(Boolean), skip_consent: trusted });
  }
  return (
    <form onSubmit={submit} className="narrow-form" aria-label={submitLabel}>
      <label htmlFor="client-name">Name</label>
      <input id="client-name" required value={name} onChange={(e) => setName(e.target.value)} />
      <label htmlFor="client-redirects">Redirect URIs (one a line)</label>
      <textarea id="client-redirects" required rows={3} value={uris} onChange={(e) => setUris(e.target.value)} />
      {children}
      <label className="inline">
        <input type="checkbox" checked={trusted} onChange={(e) => setTrusted(e.target.checked)} /> Trusted: skip the consent page
      </label>
      <button type="submit" className="primary" disabled={busy}>
        {submitLabel}
      </button>
    </form>
  );
}

/** A client secret, shown once: after creation or rotation only the digest is kept. */
export function SecretOnce({ clientId, secret }: { clientId: string; secret: string | undefined }) {
  if (!secret) return null;
  return (
    <div className="notice" role="status" aria-label="New client secret">
      <p>
        Client id <code>{clientId}</code>
      </p>
      <p>
        Secret <code id="client-secret">{secret}</code>
      </p>
      <p>Copy the secret now: it is not shown again.</p>
    </div>
  );
}
