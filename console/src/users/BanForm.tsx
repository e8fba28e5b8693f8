import { useState, type FormEvent } from "react";
import { api, type User } from "../api.ts";
import { useAction } from "../ui/hooks.ts";
import { Notice, ProblemBox } from "../ui/ProblemBox.tsx";
import { banState } from "./UserTable.tsx";

const EXPIRIES: [string, number | undefined][] = [
  ["Never (until unbanned)", undefined],
  ["1 hour", 3600],
  ["1 day", 86_400],
  ["7 days", 7 * 86_400],
  ["30 days", 30 * 86_400],
  ["1 year", 365 * 86_400],
];

/** Ban (reason, expiry; ends every session of the user) or unban. */
export function BanForm({ user, onChanged }: { user: User; onChanged: () => void }) {
  const [reason, setReason] = useState("");
  const [expiry, setExpiry] = useState("0");
  const action = useAction();

  async function ban(event: FormEvent) {
    event.preventDefault();
    const banExpiresIn = EXPIRIES[Number(expiry)]?.[1];
    const input = { userId: user.id, ...(reason.trim() ? { banReason: reason.trim() } : {}), ...(banExpiresIn ? { banExpiresIn } : {}) };
    if (await action.run(() => api.admin.banUser.mutate(input), (r) => `${r.user.email} is banned.`)) {
      setReason("");
      onChanged();
    }
  }
  async function unban() {
    if (await action.run(() => api.admin.unbanUser.mutate({ userId: user.id }), (r) => `${r.user.email} is no longer banned.`)) onChanged();
  }

  if (user.banned) {
    return (
      <div className="card" role="group" aria-labelledby="ban-title">
        <h3 id="ban-title">Ban</h3>
        <p>
          Status: <strong>{banState(user)}</strong>. Reason: {user.banReason ?? "none given"}.
        </p>
        <button type="button" onClick={unban} disabled={action.busy}>
          Unban user
        </button>
        <Notice text={action.notice} />
        <ProblemBox problem={action.problem} />
      </div>
    );
  }
  return (
    <form className="card" onSubmit={ban} aria-labelledby="ban-title">
      <h3 id="ban-title">Ban</h3>
      <p>A ban signs the user out everywhere and refuses every new sign-in.</p>
      <label htmlFor="ban-reason">Reason</label>
      <input id="ban-reason" maxLength={1000} value={reason} onChange={(e) => setReason(e.target.value)} />
      <label htmlFor="ban-expiry">Ends</label>
      <select id="ban-expiry" value={expiry} onChange={(e) => setExpiry(e.target.value)}>
        {EXPIRIES.map(([label], i) => (
          <option key={label} value={i}>
            {label}
          </option>
        ))}
      </select>
      <button type="submit" className="danger" disabled={action.busy}>
        Ban user
      </button>
      <Notice text={action.notice} />
      <ProblemBox problem={action.problem} />
    </form>
  );
}
