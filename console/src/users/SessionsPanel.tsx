import { api, type UserSession } from "../api.ts";
import { Allowed, useSession } from "../auth/session.tsx";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { useAction, useLoad } from "../ui/hooks.ts";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";

/** The user's live sessions (impersonations included), each revocable; or all at once. */
export function SessionsPanel({ userId, version, onChanged }: { userId: string; version: number; onChanged: () => void }) {
  const { me, can } = useSession();
  const sessions = useLoad(() => api.admin.listUserSessions.mutate({ userId }), [userId, version]);
  const action = useAction();

  async function revoke(id: string, label: string) {
    if (await action.run(() => api.admin.revokeUserSession.mutate({ sessionId: id }), `Session ${label} revoked.`)) onChanged();
  }
  async function revokeAll() {
    if (await action.run(() => api.admin.revokeUserSessions.mutate({ userId }), "Every session of this user was revoked.")) onChanged();
  }

  const columns: Column<UserSession>[] = [
    { header: "Started", cell: (s) => formatDate(s.createdAt) },
    { header: "Expires", cell: (s) => formatDate(s.expiresAt) },
    { header: "Address", cell: (s) => s.ipAddress ?? "—" },
    { header: "Browser", className: "ua", cell: (s) => s.userAgent ?? "—" },
    {
      header: "Kind",
      cell: (s) =>
        (s.impersonatedBy ? `Impersonation by ${s.impersonatedBy}` : "Own sign-in") + (s.id === me.session.id ? " (this browser: revoking it signs you out)" : ""),
    },
  ];
  if (can("session:revoke")) {
    columns.push({
      header: "Action",
      cell: (s, i) => (
        <button type="button" onClick={() => revoke(s.id, `#${i + 1}`)} disabled={action.busy} aria-label={`Revoke session #${i + 1}, started ${formatDate(s.createdAt)}`}>
          Revoke
        </button>
      ),
    });
  }
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <ProblemBox problem={sessions.problem} />
      <ProblemBox problem={action.problem} />
      <Notice text={action.notice} />
      {sessions.data && <DataTable caption="Live sessions, newest first" columns={columns} rows={sessions.data.sessions} rowKey={(s) => s.id} empty="No live sessions." />}
      <Allowed to="session:revoke">
        <button type="button" onClick={revokeAll} disabled={action.busy}>
          Revoke all sessions
        </button>
      </Allowed>
    </section>
  );
}
