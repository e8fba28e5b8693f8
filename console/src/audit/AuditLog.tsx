import { useEffect, useState, type FormEvent } from "react";
// The service's own closed list (a leaf, bundled as is), so the filter cannot drift from what is recorded.
import { AUDIT_ACTIONS } from "../../../src/core/audit-actions.ts";
import { api, type AuditQuery } from "../api.ts";
import { navigate, queryString, useLocation } from "../route.ts";
import { matches } from "../ui/format.ts";
import { useLoad } from "../ui/hooks.ts";
import { PageTitle } from "../ui/PageTitle.tsx";
import { Pager } from "../ui/Pager.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { AuditTable } from "./AuditTable.tsx";

const FILTERS = ["action", "actorId", "targetId", "userId"] as const;
type Filters = Record<(typeof FILTERS)[number], string>;
const LIMIT = 50;

/** list-audit-events with its filters (all combined), newest first, offset paging; the filters live in the address. */
export function AuditLog() {
  const { query } = useLocation();
  const key = query.toString();
  const current = Object.fromEntries(FILTERS.map((f) => [f, query.get(f) ?? ""])) as Filters;
  const offset = Math.max(0, Number(query.get("offset")) || 0);
  const input: AuditQuery = { limit: LIMIT, offset };
  for (const f of FILTERS) if (current[f].trim()) input[f] = current[f].trim();
  const events = useLoad(() => api.admin.listAuditEvents.query(input), [key]);
  const show = (filters: Filters, at: number) => navigate(`/audit${queryString({ ...filters, offset: at || undefined })}`);

  return (
    <>
      <PageTitle>Audit log</PageTitle>
      <AuditFilters valueKey={key} value={current} onApply={(f) => show(f, 0)} />
      <ProblemBox problem={events.problem} />
      <p role="status" className="count">
        {events.loading ? "Loading events…" : events.data ? matches(events.data.total, "event") : ""}
      </p>
      {events.data && (
        <>
          <AuditTable events={events.data.events} caption="Audit events, newest first" />
          <Pager label="Audit" total={events.data.total} limit={LIMIT} offset={offset} onOffset={(at) => show(current, at)} />
        </>
      )}
    </>
  );
}

function AuditFilters({ value, valueKey, onApply }: { value: Filters; valueKey: string; onApply: (f: Filters) => void }) {
  const [draft, setDraft] = useState(value);
  // Follows the address (back, clear) without remounting: focus stays where it was.
  useEffect(() => setDraft(value), [valueKey]);
  const set = (f: keyof Filters) => (e: { target: { value: string } }) => setDraft((d) => ({ ...d, [f]: e.target.value }));
  function submit(event: FormEvent) {
    event.preventDefault();
    onApply(draft);
  }
  return (
    <form className="query" onSubmit={submit} role="search" aria-label="Filter the audit log">
      <fieldset>
        <legend>Filters (all must match)</legend>
        <label htmlFor="audit-action">Action</label>
        <select id="audit-action" value={draft.action} onChange={set("action")}>
          <option value="">Any action</option>
          {AUDIT_ACTIONS.map((a) => (
            <option key={a} value={a}>
              {a}
            </option>
          ))}
        </select>
        <label htmlFor="audit-user">User id (actor, impersonator or target)</label>
        <input id="audit-user" value={draft.userId} onChange={set("userId")} size={38} />
        <label htmlFor="audit-actor">Actor id</label>
        <input id="audit-actor" value={draft.actorId} onChange={set("actorId")} size={38} />
        <label htmlFor="audit-target">Target id</label>
        <input id="audit-target" value={draft.targetId} onChange={set("targetId")} size={38} />
      </fieldset>
      <div className="actions">
        <button type="submit" className="primary">
          Apply
        </button>
        <button type="button" onClick={() => onApply({ action: "", actorId: "", targetId: "", userId: "" })}>
          Clear filters
        </button>
      </div>
    </form>
  );
}
