import { api, type DashboardData } from "../api.ts";
import { type Column, DataTable } from "../ui/DataTable.tsx";
import { useLoad } from "../ui/hooks.ts";
import { Link } from "../ui/Link.tsx";
import { PageTitle } from "../ui/PageTitle.tsx";
import { ProblemBox } from "../ui/ProblemBox.tsx";
import { SignInChart } from "./SignInChart.tsx";

const percent = (part: number, whole: number) => (whole === 0 ? "0%" : `${Math.round((part / whole) * 100)}%`);
const dayLabel = (day: number) => new Date(day * 86_400_000).toISOString().slice(0, 10);

type Day = DashboardData["days"][number];

/** The chart's figures as a table, for readers the chart does not reach: the days with any. */
const DAY_COLUMNS: readonly Column<Day>[] = [
  { header: "Day (UTC)", cell: (day) => dayLabel(day.day), rowHeader: true },
  { header: "Sign-ups", cell: (day) => day.signUps },
  { header: "Sign-ins", cell: (day) => day.signIns },
  { header: "Failed sign-ins", cell: (day) => day.failedSignIns },
];

/** The console's first page (docs/admin-console.md "Dashboard"): admin.dashboard's figures, drawn from the audit log. */
export function Dashboard() {
  const loaded = useLoad(() => api.admin.dashboard.query(), []);
  const d = loaded.data;
  return (
    <>
      <PageTitle>Dashboard</PageTitle>
      <ProblemBox problem={loaded.problem} />
      {loaded.loading && !d && <p role="status">Loading figures…</p>}
      {d && <Figures d={d} />}
    </>
  );
}

function Figures({ d }: { d: DashboardData }) {
  const total = (key: "signUps" | "signIns" | "failedSignIns") => d.days.reduce((sum, day) => sum + day[key], 0);
  return (
    <>
      <ul className="figures" aria-label="Figures">
        <li>
          <strong>{d.activeSessions}</strong> active sessions
        </li>
        <li>
          <strong>{d.users}</strong> users
        </li>
        <li>
          <strong>{percent(d.twoFactorUsers, d.users)}</strong> with two-factor ({d.twoFactorUsers})
        </li>
        <li>
          <strong>{percent(d.passkeyUsers, d.users)}</strong> with passkeys ({d.passkeyUsers})
        </li>
      </ul>
      <h2>Last 30 days</h2>
      <p>
        {total("signUps")} sign-ups, {total("signIns")} sign-ins, {total("failedSignIns")} failed sign-ins ({dayLabel(d.days[0]!.day)} to{" "}
        {dayLabel(d.days.at(-1)!.day)}, UTC).
      </p>
      <SignInChart days={d.days} />
      <DataTable
        className="chart-data"
        caption="The chart's figures per day"
        columns={DAY_COLUMNS}
        rows={d.days.filter((day) => day.signUps + day.signIns + day.failedSignIns > 0)}
        rowKey={(day) => String(day.day)}
      />
      <div className="columns">
        <section aria-labelledby="reasons">
          <h2 id="reasons">Top failure reasons</h2>
          {d.topFailureReasons.length === 0 ? (
            <p>No failed sign-ins in 30 days.</p>
          ) : (
            <ol>
              {d.topFailureReasons.map((r) => (
                <li key={r.reason}>
                  <code>{r.reason}</code>: {r.count}
                </li>
              ))}
            </ol>
          )}
        </section>
        <section aria-labelledby="recent">
          <h2 id="recent">Recent admin actions</h2>
          {d.recentAdminActions.length === 0 ? (
            <p>None yet.</p>
          ) : (
            <ul>
              {d.recentAdminActions.map((a) => (
                <li key={a.id}>
                  <code>{a.action}</code>
                  {a.targetId && (
                    <>
                      {" "}
                      on <Link to={`/users/${encodeURIComponent(a.targetId)}`}>{a.targetId.slice(0, 8)}</Link>
                    </>
                  )}{" "}
                  <time dateTime={a.createdAt}>{a.createdAt.replace("T", " ").slice(0, 16)}</time>
                </li>
              ))}
            </ul>
          )}
          <p>
            <Link to="/audit">All audit events</Link>
          </p>
        </section>
      </div>
    </>
  );
}
