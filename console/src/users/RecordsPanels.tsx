import { api, type Account, type DeviceCode } from "../api.ts";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { useLoad } from "../ui/hooks.ts";
import { ProblemBox } from "../ui/ProblemBox.tsx";

const ACCOUNT_COLUMNS: Column<Account>[] = [
  { header: "Provider", cell: (a) => (a.providerId === "credential" ? "Password (credential)" : a.providerId) },
  { header: "Account id at the provider", cell: (a) => <code>{a.accountId}</code> },
  { header: "Scopes", cell: (a) => (a.scopes.length ? a.scopes.join(", ") : "—") },
  { header: "Linked", cell: (a) => formatDate(a.createdAt) },
];

/** Ways the user signs in: the password ("credential") and linked provider accounts. No token is ever listed. */
export function AccountsPanel({ userId, version }: { userId: string; version: number }) {
  const accounts = useLoad(() => api.admin.listUserAccounts.query({ userId }), [userId, version]);
  return (
    <section aria-labelledby="accounts-title">
      <h2 id="accounts-title">Linked accounts</h2>
      <ProblemBox problem={accounts.problem} />
      {accounts.data && (
        <DataTable
          caption="Accounts"
          columns={ACCOUNT_COLUMNS}
          rows={accounts.data.accounts}
          rowKey={(a) => a.id}
          empty="No accounts: this user cannot sign in with a password or a provider."
        />
      )}
    </section>
  );
}

const STATUS: Record<string, string> = { pending: "Pending (claimed, not yet decided)", approved: "Approved", denied: "Denied" };

const DEVICE_COLUMNS: Column<DeviceCode>[] = [
  { header: "Client", cell: (d) => <code>{d.clientId}</code> },
  { header: "Scope", cell: (d) => d.scope ?? "—" },
  { header: "Status", cell: (d) => STATUS[d.status] ?? d.status },
  { header: "Requested", cell: (d) => formatDate(d.createdAt) },
  { header: "Expires", cell: (d) => formatDate(d.expiresAt) },
];

/** Device authorization requests (RFC 8628) the user claimed on the /device page. */
export function DeviceCodesPanel({ userId, version }: { userId: string; version: number }) {
  const codes = useLoad(() => api.admin.listUserDeviceCodes.query({ userId }), [userId, version]);
  return (
    <section aria-labelledby="devices-title">
      <h2 id="devices-title">Device codes</h2>
      <ProblemBox problem={codes.problem} />
      {codes.data && <DataTable caption="Device codes, newest first" columns={DEVICE_COLUMNS} rows={codes.data.deviceCodes} rowKey={(d) => d.id} empty="No device codes." />}
    </section>
  );
}
