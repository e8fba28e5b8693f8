import { api } from "../api.ts";
import { formatDate } from "../ui/format.ts";
import { useLoad } from "../ui/hooks.ts";
import { ProblemBox } from "../ui/ProblemBox.tsx";

/** Ways the user signs in: the password ("credential") and linked provider accounts. No token is ever listed. */
export function AccountsPanel({ userId, version }: { userId: string; version: number }) {
  const accounts = useLoad(() => api.admin.listUserAccounts.query({ userId }), [userId, version]);
  const list = accounts.data?.accounts ?? [];
  return (
    <section aria-labelledby="accounts-title">
      <h2 id="accounts-title">Linked accounts</h2>
      <ProblemBox problem={accounts.problem} />
      {accounts.data && list.length === 0 && <p>No accounts: this user cannot sign in with a password or a provider.</p>}
      {list.length > 0 && (
        <table>
          <caption>Accounts</caption>
          <thead>
            <tr>
              <th scope="col">Provider</th>
              <th scope="col">Account id at the provider</th>
              <th scope="col">Scopes</th>
              <th scope="col">Linked</th>
            </tr>
          </thead>
          <tbody>
            {list.map((a) => (
              <tr key={a.id}>
                <td>{a.providerId === "credential" ? "Password (credential)" : a.providerId}</td>
                <td>
                  <code>{a.accountId}</code>
                </td>
                <td>{a.scopes.length ? a.scopes.join(", ") : "—"}</td>
                <td>{formatDate(a.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

const STATUS: Record<string, string> = { pending: "Pending (claimed, not yet decided)", approved: "Approved", denied: "Denied" };

/** Device authorization requests (RFC 8628) the user claimed on the /device page. */
export function DeviceCodesPanel({ userId, version }: { userId: string; version: number }) {
  const codes = useLoad(() => api.admin.listUserDeviceCodes.query({ userId }), [userId, version]);
  const list = codes.data?.deviceCodes ?? [];
  return (
    <section aria-labelledby="devices-title">
      <h2 id="devices-title">Device codes</h2>
      <ProblemBox problem={codes.problem} />
      {codes.data && list.length === 0 && <p>No device codes.</p>}
      {list.length > 0 && (
        <table>
          <caption>Device codes, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Client</th>
              <th scope="col">Scope</th>
              <th scope="col">Status</th>
              <th scope="col">Requested</th>
              <th scope="col">Expires</th>
            </tr>
          </thead>
          <tbody>
            {list.map((d) => (
              <tr key={d.id}>
                <td>
                  <code>{d.clientId}</code>
                </td>
                <td>{d.scope ?? "—"}</td>
                <td>{STATUS[d.status] ?? d.status}</td>
                <td>{formatDate(d.createdAt)}</td>
                <td>{formatDate(d.expiresAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
