import type { User } from "../api.ts";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";

/** Every state in words (Banned / Active, Yes / No, On / Off): nothing is told by colour alone. */
export function banState(user: Pick<User, "banned" | "banExpires">): string {
  if (!user.banned) return "Active";
  return user.banExpires ? `Banned until ${formatDate(user.banExpires)}` : "Banned";
}

const COLUMNS: Column<User>[] = [
  { header: "Email", rowHeader: true, cell: (u) => u.email },
  { header: "Name", cell: (u) => u.name },
  { header: "Role", cell: (u) => u.role },
  {
    header: "Status",
    cell: (u) => (
      <>
        <span className={u.banned ? "tag tag-bad" : "tag"}>{banState(u)}</span>
        {u.banned && u.banReason ? <span className="reason"> — {u.banReason}</span> : null}
      </>
    ),
  },
  { header: "Email verified", cell: (u) => (u.emailVerified ? "Yes" : "No") },
  { header: "Two-factor", cell: (u) => (u.twoFactorEnabled ? "On" : "Off") },
  { header: "Created", cell: (u) => formatDate(u.createdAt) },
];

export function UserTable({ users, caption }: { users: User[]; caption: string }) {
  return (
    <DataTable
      caption={caption}
      columns={COLUMNS}
      rows={users}
      rowKey={(u) => u.id}
      rowClassName={(u) => (u.banned ? "is-banned" : undefined)}
      rowLink={(u) => `/users/${encodeURIComponent(u.id)}`}
    />
  );
}
