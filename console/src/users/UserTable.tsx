import type { User } from "../api.ts";
import { formatDate } from "../ui/format.ts";
import { Link } from "../ui/Link.tsx";

/** Every state in words (Banned / Active, Yes / No, On / Off): nothing is told by colour alone. */
export function banState(user: Pick<User, "banned" | "banExpires">): string {
  if (!user.banned) return "Active";
  return user.banExpires ? `Banned until ${formatDate(user.banExpires)}` : "Banned";
}

export function UserTable({ users, caption }: { users: User[]; caption: string }) {
  return (
    <table>
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">Email</th>
          <th scope="col">Name</th>
          <th scope="col">Role</th>
          <th scope="col">Status</th>
          <th scope="col">Email verified</th>
          <th scope="col">Two-factor</th>
          <th scope="col">Created</th>
        </tr>
      </thead>
      <tbody>
        {users.map((u) => (
          <tr key={u.id} className={u.banned ? "is-banned" : undefined}>
            <th scope="row">
              <Link to={`/users/${encodeURIComponent(u.id)}`}>{u.email}</Link>
            </th>
            <td>{u.name}</td>
            <td>{u.role}</td>
            <td>
              <span className={u.banned ? "tag tag-bad" : "tag"}>{banState(u)}</span>
              {u.banned && u.banReason ? <span className="reason"> — {u.banReason}</span> : null}
            </td>
            <td>{u.emailVerified ? "Yes" : "No"}</td>
            <td>{u.twoFactorEnabled ? "On" : "Off"}</td>
            <td>{formatDate(u.createdAt)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
