import { useState, type FormEvent } from "react";
import { api } from "../api.ts";
import { Allowed, useSession } from "../auth/session.tsx";
import { navigate } from "../route.ts";
import { useAction } from "../ui/hooks.ts";
import { PageTitle } from "../ui/PageTitle.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";

/** create-user: a role only when the admin may also set roles (the server asks for set-role then). */
export function CreateUser() {
  const { can } = useSession();
  const [form, setForm] = useState({ name: "", email: "", password: "", role: "", emailVerified: false });
  const action = useAction();
  const set = (key: keyof typeof form) => (e: { target: { value: string; checked: boolean; type: string } }) =>
    setForm((f) => ({ ...f, [key]: e.target.type === "checkbox" ? e.target.checked : e.target.value }));

  async function submit(event: FormEvent) {
    event.preventDefault();
    const input = {
      name: form.name,
      email: form.email.trim(),
      ...(form.password ? { password: form.password } : {}),
      ...(form.role.trim() && can("user:set-role") ? { role: form.role.trim() } : {}),
      ...(form.emailVerified ? { data: { emailVerified: true } } : {}),
    };
    const created = await action.run(() => api.admin.createUser.mutate(input));
    if (created) navigate(`/users/${encodeURIComponent(created.user.id)}`);
  }

  return (
    <>
      <PageTitle>Create a user</PageTitle>
      <form onSubmit={submit} className="narrow-form" aria-label="New user">
        <label htmlFor="new-name">Name</label>
        <input id="new-name" required value={form.name} onChange={set("name")} />
        <label htmlFor="new-email">Email</label>
        <input id="new-email" type="email" required value={form.email} onChange={set("email")} />
        <label htmlFor="new-user-password">Password (optional: without one the user signs in another way)</label>
        <input id="new-user-password" type="password" autoComplete="new-password" value={form.password} onChange={set("password")} />
        <Allowed to="user:set-role">
          <label htmlFor="new-role">Role (default when empty)</label>
          <input id="new-role" list="new-roles" value={form.role} onChange={set("role")} />
          <datalist id="new-roles">
            <option value="admin" />
            <option value="user" />
          </datalist>
        </Allowed>
        <label className="inline">
          <input type="checkbox" checked={form.emailVerified} onChange={set("emailVerified")} /> Email address already verified
        </label>
        <button type="submit" className="primary" disabled={action.busy}>
          Create user
        </button>
      </form>
      <ProblemBox problem={action.problem} />
    </>
  );
}
