import type { MikroORM } from "@mikro-orm/core";
import type { Dialect } from "./target.ts";

/**
 * The admin console's dashboard (docs/admin-console.md "Dashboard"): one aggregate query per
 * figure, each on an index (test/integration/admin/dashboard.test.ts reads their plans):
 * users.created_at (users_created_at_id_index), audit_events (action, created_at)
 * (audit_events_action_created_at_index), sessions.expires_at, passkeys.user_id. Days are UTC
 * days since the epoch.
 */

/** The audit actions that are sign-ins: the password and social ways (`sign-in`) and the two passwordless ones. */
export const SIGN_IN_ACTIONS = ["sign-in", "magic-link-sign-in", "email-otp-sign-in"] as const;
const SIGN_IN_FAILED = "sign-in-failed";
/** Everything else in the trail is an admin's (or the CLI's) action. */
const NOT_ADMIN = [...SIGN_IN_ACTIONS, SIGN_IN_FAILED];

const DAY_MS = 86_400_000;

export interface DashboardQueries {
  signUpsPerDay: string;
  signInsPerDay: string;
  failuresPerDay: string;
  activeSessions: string;
  twoFactorUsers: string;
  passkeyUsers: string;
  totalUsers: string;
  recentAdminActions: string;
  topFailureReasons: string;
}

export function dashboardQueries(dialect: Dialect): DashboardQueries {
  // Bindings are `?` on both dialects (the ORM's connection, as db/sweep.ts).
  const q = (_n: number) => "?";
  const day = dialect === "sqlite" ? `(created_at / ${DAY_MS})` : `floor(extract(epoch from created_at) / 86400)::int`;
  const list = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");
  const reason = dialect === "sqlite" ? `json_extract(metadata, '$.reason')` : `(metadata::jsonb ->> 'reason')`;
  return {
    signUpsPerDay: `select ${day} as day, count(*) as n from users where created_at >= ${q(1)} group by 1 order by 1`,
    signInsPerDay: `select ${day} as day, count(*) as n from audit_events where action in (${list(SIGN_IN_ACTIONS)}) and created_at >= ${q(1)} group by 1 order by 1`,
    failuresPerDay: `select ${day} as day, count(*) as n from audit_events where action = '${SIGN_IN_FAILED}' and created_at >= ${q(1)} group by 1 order by 1`,
    activeSessions: `select count(*) as n from sessions where expires_at > ${q(1)} and impersonated_by is null`,
    twoFactorUsers: `select count(*) as n from users where two_factor_enabled = ${dialect === "sqlite" ? "1" : "true"}`,
    passkeyUsers: `select count(distinct user_id) as n from passkeys`,
    totalUsers: `select count(*) as n from users`,
    recentAdminActions: `select id, actor_id, action, target_id, created_at from audit_events where action not in (${list(NOT_ADMIN)}) order by created_at desc limit 10`,
    topFailureReasons: `select ${reason} as reason, count(*) as n from audit_events where action = '${SIGN_IN_FAILED}' and created_at >= ${q(1)} group by 1 order by 2 desc limit 5`,
  };
}

export interface Dashboard {
  /** 30 UTC days, oldest first, today last: epoch day and counts. */
  days: { day: number; signUps: number; signIns: number; failedSignIns: number }[];
  activeSessions: number;
  users: number;
  twoFactorUsers: number;
  passkeyUsers: number;
  recentAdminActions: { id: string; actorId: string | null; action: string; targetId: string | null; createdAt: string }[];
  topFailureReasons: { reason: string; count: number }[];
}

export async function readDashboard(orm: MikroORM, dialect: Dialect, nowMs: number): Promise<Dashboard> {
  const sql = dashboardQueries(dialect);
  const today = Math.floor(nowMs / DAY_MS);
  const sinceMs = (today - 29) * DAY_MS;
  const at = (ms: number) => (dialect === "sqlite" ? ms : new Date(ms).toISOString());
  const conn = orm.em.getConnection();
  const rows = <T>(text: string, params: unknown[] = []): Promise<T[]> => conn.execute(text, params, "all") as Promise<T[]>;
  const [signUps, signIns, failures, active, twoFactor, passkeys, total, recent, reasons] = await Promise.all([
    rows<{ day: number; n: number }>(sql.signUpsPerDay, [at(sinceMs)]),
    rows<{ day: number; n: number }>(sql.signInsPerDay, [at(sinceMs)]),
    rows<{ day: number; n: number }>(sql.failuresPerDay, [at(sinceMs)]),
    rows<{ n: number }>(sql.activeSessions, [at(nowMs)]),
    rows<{ n: number }>(sql.twoFactorUsers),
    rows<{ n: number }>(sql.passkeyUsers),
    rows<{ n: number }>(sql.totalUsers),
    rows<{ id: string; actor_id: string | null; action: string; target_id: string | null; created_at: number | string | Date }>(sql.recentAdminActions),
    rows<{ reason: string | null; n: number }>(sql.topFailureReasons, [at(sinceMs)]),
  ]);
  const byDay = (list: { day: number; n: number }[]) => new Map(list.map((r) => [Number(r.day), Number(r.n)]));
  const [u, s, f] = [byDay(signUps), byDay(signIns), byDay(failures)];
  const days = Array.from({ length: 30 }, (_, i) => today - 29 + i).map((day) => ({ day, signUps: u.get(day) ?? 0, signIns: s.get(day) ?? 0, failedSignIns: f.get(day) ?? 0 }));
  const count = (r: { n: number }[]) => Number(r[0]?.n ?? 0);
  return {
    days,
    activeSessions: count(active),
    users: count(total),
    twoFactorUsers: count(twoFactor),
    passkeyUsers: count(passkeys),
    recentAdminActions: recent.map((r) => ({
      id: r.id,
      actorId: r.actor_id,
      action: r.action,
      targetId: r.target_id,
      createdAt: new Date(typeof r.created_at === "number" ? r.created_at : r.created_at).toISOString(),
    })),
    topFailureReasons: reasons.map((r) => ({ reason: r.reason ?? "unknown", count: Number(r.n) })),
  };
}
