import { api, type UserApiKey } from "../api.ts";
import { useSession } from "../auth/session.tsx";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { useAction, useLoad } from "../ui/hooks.ts";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";

/** What a key may still do: enabled or not, its expiry, its remaining uses. */
function keyState(k: UserApiKey): string {
  if (!k.enabled) return "Disabled";
  if (k.expiresAt && new Date(k.expiresAt).getTime() <= Date.now()) return "Expired";
  return k.remaining === null ? "Active" : `Active, ${k.remaining} uses left`;
}

/** The user's API keys (docs/machine-access.md): never the key, only its first characters; each revocable. */
export function ApiKeysPanel({ userId, version, onChanged }: { userId: string; version: number; onChanged: () => void }) {
  const { can } = useSession();
  const keys = useLoad(() => api.admin.listApiKeys.query({ userId }), [userId, version]);
  const action = useAction();

  async function revoke(k: UserApiKey) {
    const label = k.name ?? k.start ?? k.id;
    if (await action.run(() => api.admin.revokeApiKey.mutate({ keyId: k.id }), `API key ${label} revoked.`)) onChanged();
  }

  const columns: Column<UserApiKey>[] = [
    { header: "Name", cell: (k) => k.name ?? "—" },
    { header: "Starts with", cell: (k) => (k.start ? <code>{k.start}…</code> : "—") },
    { header: "State", cell: keyState },
    { header: "Created", cell: (k) => formatDate(k.createdAt) },
    { header: "Expires", cell: (k) => (k.expiresAt ? formatDate(k.expiresAt) : "Never") },
    { header: "Last used", cell: (k) => (k.lastRequest ? formatDate(k.lastRequest) : "—") },
  ];
  if (can("apiKey:revoke")) {
    columns.push({
      header: "Action",
      cell: (k) => (
        <button type="button" onClick={() => revoke(k)} disabled={action.busy} aria-label={`Revoke API key ${k.name ?? k.start ?? k.id}`}>
          Revoke
        </button>
      ),
    });
  }
  return (
    <section aria-labelledby="api-keys-title">
      <h2 id="api-keys-title">API keys</h2>
      <ProblemBox problem={keys.problem} />
      <ProblemBox problem={action.problem} />
      <Notice text={action.notice} />
      {keys.data && <DataTable caption="API keys, newest first" columns={columns} rows={keys.data.apiKeys} rowKey={(k) => k.id} empty="No API keys." />}
    </section>
  );
}
