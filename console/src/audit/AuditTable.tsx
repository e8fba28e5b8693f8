import type { AuditEvent } from "../api.ts";
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

function details(e: AuditEvent): string {
  if (!e.metadata) return "";
  return Object.entries(e.metadata)
    .map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`)
    .join("; ");
}

/** Audit events, newest first: who (and behind whom), what, on which target, from where. */
export function AuditTable({ events, caption }: { events: AuditEvent[]; caption: string }) {
  if (events.length === 0) return <p>No audit events match.</p>;
  return (
    <table className="audit">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Action</th>
          <th scope="col">Actor</th>
          <th scope="col">Impersonator</th>
          <th scope="col">Target</th>
          <th scope="col">Details</th>
          <th scope="col">Address</th>
        </tr>
      </thead>
      <tbody>
        {events.map((e) => (
          <tr key={e.id}>
            <td>{formatDate(e.createdAt)}</td>
            <th scope="row">{e.action}</th>
            <td>{e.actorId ? userLink(e.actorId) : "CLI (operator)"}</td>
            <td>{userLink(e.impersonatorId)}</td>
            <td>
              {e.targetType === "user" ? userLink(e.targetId) : e.targetId ? <>session <code>{e.targetId.slice(0, 8)}…</code></> : "—"}
            </td>
            <td className="details">{details(e)}</td>
            <td>{e.ip ?? "—"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
