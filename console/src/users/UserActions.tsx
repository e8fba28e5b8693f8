import { useState, type FormEvent } from "react";
import { api, type User } from "../api.ts";
import { Allowed, useSession } from "../auth/session.tsx";
import { navigate } from "../route.ts";
import { useAction } from "../ui/hooks.ts";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";
import { BanForm } from "./BanForm.tsx";

/** Each action appears only when the admin's roles grant it; the server checks again. */
export function UserActions({ user, onChanged }: { user: User; onChanged: () => void }) {
  const { can } = useSession();
  const any = (["user:set-role", "user:set-password", "user:ban", "user:impersonate", "user:delete"] as const).some(can);
  if (!any) return null;
  return (
    <section aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      <div className="cards">
        <Allowed to="user:ban">
          <BanForm user={user} onChanged={onChanged} />
        </Allowed>
        <Allowed to="user:set-role">
          <RoleForm user={user} onChanged={onChanged} />
        </Allowed>
        <Allowed to="user:set-password">
          <PasswordForm user={user} onChanged={onChanged} />
        </Allowed>
        <Allowed to="user:impersonate">
          <Impersonate user={user} />
        </Allowed>
        <Allowed to="user:delete">
          <Delete user={user} />
        </Allowed>
      </div>
    </section>
  );
}

function RoleForm({ user, onChanged }: { user: User; onChanged: () => void }) {
  const [role, setRole] = useState(user.role);
  const action = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await action.run(() => api.admin.setRole.mutate({ userId: user.id, role: role.trim() }), (r) => `Role is now ${r.user.role}.`)) onChanged();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="role-title">
      <h3 id="role-title">Role</h3>
      <label htmlFor="role">Role (several: comma-separated)</label>
      <input id="role" list="roles" required value={role} onChange={(e) => setRole(e.target.value)} />
      <datalist id="roles">
        <option value="admin" />
        <option value="user" />
      </datalist>
      <button type="submit" disabled={action.busy}>
        Set role
      </button>
      <Notice text={action.notice} />
      <ProblemBox problem={action.problem} />
    </form>
  );
}

function PasswordForm({ user, onChanged }: { user: User; onChanged: () => void }) {
  const [password, setPassword] = useState("");
  const action = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await action.run(() => api.admin.setUserPassword.mutate({ userId: user.id, newPassword: password }), "Password set.")) {
      setPassword("");
      onChanged();
    }
  }
  async function resetTwoFactor() {
    if (await action.run(() => api.admin.resetTwoFactor.mutate({ userId: user.id }), "Two-factor turned off for this user.")) onChanged();
  }
  return (
    <form className="card" onSubmit={submit} aria-labelledby="password-title">
      <h3 id="password-title">Password</h3>
      <label htmlFor="new-password">New password</label>
      <input id="new-password" type="password" autoComplete="new-password" required value={password} onChange={(e) => setPassword(e.target.value)} />
      <button type="submit" disabled={action.busy}>
        Set password
      </button>
      {user.twoFactorEnabled && (
        <button type="button" onClick={resetTwoFactor} disabled={action.busy}>
          Reset two-factor
        </button>
      )}
      <Notice text={action.notice} />
      <ProblemBox problem={action.problem} />
    </form>
  );
}

function Impersonate({ user }: { user: User }) {
  const { refresh } = useSession();
  const action = useAction();
  async function start() {
    // The browser's session becomes the user's; the App then shows the impersonation screen.
    if (await action.run(() => api.admin.impersonateUser.mutate({ userId: user.id }))) {
      // Back at the user list once the impersonation ends.
      navigate("/users", { replace: true });
      refresh();
    }
  }
  return (
    <div className="card" role="group" aria-labelledby="impersonate-title">
      <h3 id="impersonate-title">Impersonate</h3>
      <p>Act as this user in this browser for up to an hour (audited). You can stop at any time.</p>
      <button type="button" onClick={start} disabled={action.busy || user.banned}>
        Impersonate {user.email}
      </button>
      {user.banned && <p>A banned user cannot be impersonated.</p>}
      <ProblemBox problem={action.problem} />
    </div>
  );
}

function Delete({ user }: { user: User }) {
  const [confirm, setConfirm] = useState("");
  const action = useAction();
  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await action.run(() => api.admin.removeUser.mutate({ userId: user.id }))) navigate("/users");
  }
  return (
    <form className="card danger" onSubmit={submit} aria-labelledby="delete-title">
      <h3 id="delete-title">Delete user</h3>
      <p>Removes the user, their sessions and linked accounts for good. The audit trail keeps their id.</p>
      <label htmlFor="delete-confirm">Type the email address to confirm</label>
      <input id="delete-confirm" value={confirm} onChange={(e) => setConfirm(e.target.value)} autoComplete="off" />
      <button type="submit" className="danger" disabled={action.busy || confirm.trim().toLowerCase() !== user.email}>
        Delete user
      </button>
      <ProblemBox problem={action.problem} />
    </form>
  );
}
