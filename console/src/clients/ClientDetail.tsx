import { useState } from "react";
import { api, type ClientConsent } from "../api.ts";
import { Allowed } from "../auth/session.tsx";
import { navigate } from "../route.ts";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { useAction, useLoad } from "../ui/hooks.ts";
import { Link } from "../ui/Link.tsx";
import { PageTitle } from "../ui/PageTitle.tsx";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";
import { ClientForm, SecretOnce, type ClientFormValues } from "./ClientForm.tsx";

/** One client: edit it, rotate its secret, delete it (with its tokens and consents); who allowed it. */
export function ClientDetail({ id }: { id: string }) {
  const one = useLoad(() => api.admin.oauth2.getClient.query({ client_id: id }), [id]);
  const consents = useLoad(() => api.admin.oauth2.getClientConsents.query({ client_id: id }), [id]);
  const action = useAction();
  const [secret, setSecret] = useState<string | undefined>();
  const client = one.data;

  async function save(v: ClientFormValues) {
    if (await action.run(() => api.admin.oauth2.updateClient.mutate({ client_id: id, update: v }), "Client saved.")) one.reload();
  }
  async function rotate() {
    const rotated = await action.run(() => api.admin.oauth2.rotateSecret.mutate({ client_id: id }), "New secret made; the old one no longer works.");
    if (rotated) setSecret(rotated.client_secret);
  }
  async function remove() {
    if (!window.confirm(`Delete ${client?.client_name ?? id}? Its tokens and consents go with it.`)) return;
    if ((await action.run(() => api.admin.oauth2.deleteClient.mutate({ client_id: id }))) !== undefined) navigate("/clients");
  }

  const columns: Column<ClientConsent>[] = [
    { header: "User", cell: (c) => <Link to={`/users/${encodeURIComponent(c.userId)}`}>{c.userEmail}</Link> },
    { header: "Scopes", cell: (c) => c.scopes.join(" ") },
    { header: "Allowed", cell: (c) => formatDate(c.createdAt) },
  ];
  const name = client?.client_name ?? id;
  return (
    <>
      <p className="crumbs">
        <Link to="/clients">OAuth clients</Link> / {name}
      </p>
      <PageTitle text={name}>{client ? name : one.loading ? "Loading client…" : "Client not found"}</PageTitle>
      <ProblemBox problem={one.problem} />
      <ProblemBox problem={action.problem} />
      <Notice text={action.notice} />
      <SecretOnce clientId={id} secret={secret} />
      {client && (
        <>
          <p>
            Client id <code>{client.client_id}</code>, {client.public ? "public (no secret)" : "confidential"}, grants {client.grant_types.join(", ")}.
          </p>
          <Allowed to="oauthClient:update">
            <ClientForm initial={client} submitLabel="Save client" busy={action.busy} onSubmit={save} />
            {!client.public && (
              <button type="button" onClick={rotate} disabled={action.busy}>
                Rotate secret
              </button>
            )}
          </Allowed>
          <Allowed to="oauthClient:delete">
            <button type="button" className="danger" onClick={remove} disabled={action.busy}>
              Delete client
            </button>
          </Allowed>
          <section aria-labelledby="client-consents-title">
            <h2 id="client-consents-title">Consents</h2>
            <ProblemBox problem={consents.problem} />
            {consents.data && <DataTable caption="Users who allowed this client, newest first" columns={columns} rows={consents.data} rowKey={(c) => c.id} empty="No user has allowed this client." />}
          </section>
        </>
      )}
    </>
  );
}
