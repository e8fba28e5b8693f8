import { useState } from "react";
import { api } from "../api.ts";
import { useLoad } from "../ui/hooks.ts";
import { Pager } from "../ui/Pager.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { AuditTable } from "./AuditTable.tsx";

const LIMIT = 10;

/** The audit trail of one user: what they did, what was done to them, what was done through impersonating them. */
export function UserAudit({ userId, version }: { userId: string; version: number }) {
  const [offset, setOffset] = useState(0);
  const events = useLoad(() => api.admin.listAuditEvents.query({ userId, limit: LIMIT, offset }), [userId, version, offset]);
  return (
    <section aria-labelledby="user-audit-title">
      <h2 id="user-audit-title">Audit events</h2>
      <ProblemBox problem={events.problem} />
      {events.data && (
        <>
          <AuditTable events={events.data.events} caption="Events by or about this user, newest first" />
          {events.data.total > LIMIT && <Pager label="User audit" total={events.data.total} limit={LIMIT} offset={offset} onOffset={setOffset} />}
        </>
      )}
    </section>
  );
}
