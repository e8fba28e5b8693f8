import { api, type SessionWithUser } from "../api.ts";
import { useAction } from "../ui/hooks.ts";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { formatDate } from "../ui/format.ts";

/**
 * The browser holds an impersonation session: it acts as the user, so no admin page is offered.
 * Stopping restores the admin's own session from the admin_session cookie (docs/wire-contract.md §6).
 */
export function Impersonating({ me, onStopped }: { me: SessionWithUser; onStopped: () => void }) {
  const action = useAction();
  async function stop() {
    const done = await action.run(() => api.admin.stopImpersonating.mutate());
    if (done !== undefined) onStopped();
  }
  async function signOut() {
    if ((await action.run(() => api.signOut.mutate())) !== undefined) onStopped();
  }
  return (
    <main className="narrow" id="main">
      <h1>Impersonating {me.user.email}</h1>
      <div className="banner" role="region" aria-label="Impersonation">
        <p>
          <strong>Impersonation session.</strong> This browser acts as <strong>{me.user.name || me.user.email}</strong> (
          {me.user.email}) until you stop, or until {formatDate(me.session.expiresAt)}. Apps on this origin see this user.
        </p>
        <p>
          Started by admin <code>{me.session.impersonatedBy}</code>.
        </p>
        <button type="button" className="primary" onClick={stop} disabled={action.busy}>
          Stop impersonating
        </button>{" "}
        <button type="button" onClick={signOut} disabled={action.busy}>
          Sign out
        </button>
      </div>
      <ProblemBox problem={action.problem} />
    </main>
  );
}
