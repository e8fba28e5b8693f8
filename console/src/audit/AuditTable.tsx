import type { AuditEvent } from "../api.ts";
import { DataTable, type Column } from "../ui/DataTable.tsx";
import { formatDate } from "../ui/format.ts";
import { Link } from "../ui/Link.tsx";

function userLink(id: string | null) {
  if (!id) return "—";
  return (
    <Link to={`/users/${encodeURIComponent(id)}`}>
      <code>{id.slice(0, 8)}…</code>
    </Link>
  );
}

function target(e: AuditEvent) {
  if (e.targetType === "user") return userLink(e.targetId);
  if (!e.targetId) return "—";
  return (
    <>
      session <code>{e.targetId.slice(0, 8)}…</code>
    </>
  );
}

function details(e: AuditEvent): string {
  if (!e.metadata) return "";
  return Object.entries(e.metadata)
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("; ");
}

const COLUMNS: Column<AuditEvent>[] = [
  { header: "When", cell: (e) => formatDate(e.createdAt) },
  { header: "Action", rowHeader: true, cell: (e) => e.action },
  { header: "Actor", cell: (e) => (e.actorId ? userLink(e.actorId) : "CLI (operator)") },
  { header: "Impersonator", cell: (e) => userLink(e.impersonatorId) },
  { header: "Target", cell: target },
  { header: "Details", className: "details", cell: details },
  { header: "Address", cell: (e) => e.ip ?? "—" },
];

/** Audit events, newest first: who (and behind whom), what, on which target, from where. */
export function AuditTable({ events, caption }: { events: AuditEvent[]; caption: string }) {
  return <DataTable className="audit" caption={caption} columns={COLUMNS} rows={events} rowKey={(e) => e.id} empty="No audit events match." />;
}
