import { useState } from "react";
import { api, type OAuthClient } from "../api.ts";
import { Allowed } from "../auth/session.tsx";
import { navigate, queryString, useLocation } from "../route.ts";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { useAction, useLoad } from "../ui/hooks.ts";
import { Link } from "../ui/Link.tsx";
import { PageTitle } from "../ui/PageTitle.tsx";
import { Pager } from "../ui/Pager.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { ClientForm, SecretOnce, type ClientFormValues } from "./ClientForm.tsx";

/** The OpenID provider's clients (docs/oidc-provider.md "Clients"), newest first; a form to create one. */
export function ClientList() {
  const { query } = useLocation();
  const offset = Number(query.get("offset") ?? 0) || 0;
  const limit = 50;
  const page = useLoad(() => api.admin.oauth2.listClients.query({ limit, offset }), [offset]);
  const create = useAction();
  const [created, setCreated] = useState<{ client_id: string; client_secret?: string | undefined } | null>(null);
  const [formKey, setFormKey] = useState(0);

  async function submit(v: ClientFormValues) {
    const client = await create.run(() => api.admin.oauth2.createClient.mutate({ ...v, grant_types: ["authorization_code", "refresh_token"] }), `Client ${v.client_name} created.`);
    if (!client) return;
    setCreated(client);
    setFormKey((k) => k + 1);
    page.reload();
  }

  const columns: Column<OAuthClient>[] = [
    { header: "Name", cell: (c) => <Link to={`/clients/${encodeURIComponent(c.client_id)}`}>{c.client_name ?? c.client_id}</Link> },
    { header: "Client id", cell: (c) => <code>{c.client_id}</code> },
    { header: "Kind", cell: (c) => [c.public ? "Public" : "Confidential", c.skip_consent ? "trusted" : null, c.disabled ? "disabled" : null].filter(Boolean).join(", ") },
    { header: "Redirect URIs", cell: (c) => c.redirect_uris.join(" ") },
    { header: "Created", cell: (c) => formatDate(new Date(c.client_id_issued_at * 1000).toISOString()) },
  ];
  return (
    <>
      <PageTitle text="OAuth clients">OAuth clients</PageTitle>
      <ProblemBox problem={page.problem} />
      {page.data && (
        <>
          <DataTable caption={`${page.data.total} clients, newest first`} columns={columns} rows={page.data.clients} rowKey={(c) => c.client_id} empty="No clients yet." />
          <Pager label="Clients" offset={offset} limit={limit} total={page.data.total} onOffset={(o) => navigate(`/clients${queryString({ offset: o || undefined })}`)} />
        </>
      )}
      <Allowed to="oauthClient:create">
        <section aria-labelledby="new-client-title">
          <h2 id="new-client-title">New client</h2>
          <ClientForm key={formKey} submitLabel="Create client" busy={create.busy} onSubmit={submit} />
          <ProblemBox problem={create.problem} />
          {created && <SecretOnce clientId={created.client_id} secret={created.client_secret} />}
        </section>
      </Allowed>
    </>
  );
}
