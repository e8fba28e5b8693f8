import { api } from "../api.ts";
import { Allowed, useSession } from "../auth/session.tsx";
import { formatDate } from "../ui/format.ts";
import { useAction, useLoad } from "../ui/hooks.ts";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";

/** The user's live sessions (impersonations included), each revocable; or all at once. */
export function SessionsPanel({ userId, version, onChanged }: { userId: string; version: number; onChanged: () => void }) {
  const { me } = useSession();
  const sessions = useLoad(() => api.admin.listUserSessions.mutate({ userId }), [userId, version]);
  const action = useAction();

  async function revoke(id: string, label: string) {
    if (await action.run(() => api.admin.revokeUserSession.mutate({ sessionId: id }), `Session ${label} revoked.`)) onChanged();
  }
  async function revokeAll() {
    if (await action.run(() => api.admin.revokeUserSessions.mutate({ userId }), "Every session of this user was revoked.")) onChanged();
  }

  const list = sessions.data?.sessions ?? [];
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <ProblemBox problem={sessions.problem} />
      <ProblemBox problem={action.problem} />
      <Notice text={action.notice} />
      {sessions.data && list.length === 0 && <p>No live sessions.</p>}
      {list.length > 0 && (
        <table>
          <caption>Live sessions, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Expires</th>
              <th scope="col">Address</th>
              <th scope="col">Browser</th>
              <th scope="col">Kind</th>
              <Allowed to="session:revoke">
                <th scope="col">Action</th>
              </Allowed>
            </tr>
          </thead>
          <tbody>
            {list.map((s, i) => (
              <tr key={s.id}>
                <td>{formatDate(s.createdAt)}</td>
                <td>{formatDate(s.expiresAt)}</td>
                <td>{s.ipAddress ?? "—"}</td>
                <td className="ua">{s.userAgent ?? "—"}</td>
                <td>
                  {s.impersonatedBy ? `Impersonation by ${s.impersonatedBy}` : "Own sign-in"}
                  {s.id === me.session.id ? " (this browser: revoking it signs you out)" : ""}
                </td>
                <Allowed to="session:revoke">
                  <td>
                    <button type="button" onClick={() => revoke(s.id, `#${i + 1}`)} disabled={action.busy} aria-label={`Revoke session #${i + 1}, started ${formatDate(s.createdAt)}`}>
                      Revoke
                    </button>
                  </td>
                </Allowed>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Allowed to="session:revoke">
        <button type="button" onClick={revokeAll} disabled={action.busy}>
          Revoke all sessions
        </button>
      </Allowed>
    </section>
  );
}
