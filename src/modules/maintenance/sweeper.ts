import type { App } from "../../app.ts";
import { PURGE_AFTER_MS as DEVICE_CODE_GRACE_MS } from "../device/device.service.ts";

export interface SweepResult {
  sessions: number;
  verifications: number;
  deviceCodes: number;
  rateLimits: number;
  twoFactorChallenges: number;
  auditEvents: number;
}

export interface Sweeper {
  /** One full sweep now, by the app's clock (tests move the injected clock, then call this). */
  sweepOnce(): Promise<SweepResult>;
  /** Sweeps every `sweeper.intervalSec` (a timer that never keeps the process alive). */
  start(): void;
  /** Stops the schedule and waits for a sweep in progress. */
  stop(): Promise<void>;
}

/** At most this many batches per table and sweep: a huge backlog is worked off over several sweeps. */
const MAX_BATCHES = 100;

interface Target {
  name: keyof SweepResult;
  table: string;
  key: string;
  column: string;
  /** The cutoff for this table, from now (ms since the epoch). */
  cutoff(nowMs: number): number;
  /** Epoch milliseconds column (rate limits), or a datetime column. */
  epochMs?: boolean;
}

const TARGETS: Target[] = [
  // Expired sessions are refused by every lookup already; the rows only take space.
  { name: "sessions", table: "sessions", key: "id", column: "expires_at", cutoff: (now) => now },
  // Email verification, password reset and OAuth state records: single use, dead once expired.
  { name: "verifications", table: "verifications", key: "id", column: "expires_at", cutoff: (now) => now },
  // Expired device codes stay a day, so that a late poll still gets expired_token (RFC 8628 §3.5).
  { name: "deviceCodes", table: "device_codes", key: "id", column: "expires_at", cutoff: (now) => now - DEVICE_CODE_GRACE_MS },
  // Counters of the database rate-limit store whose window has passed (epoch ms; the library
  // stamps them by the wall clock, compared here with the app's clock: the same one in production).
  { name: "rateLimits", table: "rate_limits", key: "key", column: "expire", cutoff: (now) => now, epochMs: true },
  // Pending two-factor sign-ins, trusted devices and mailed codes: dead once expired.
  { name: "twoFactorChallenges", table: "two_factor_challenges", key: "id", column: "expires_at", cutoff: (now) => now },
];

const DAY_MS = 24 * 3600 * 1000;

/** The expiring tables, and the audit trail past `sweeper.auditRetentionDays` when one is set. */
function targetsOf(auditRetentionDays: number | null): Target[] {
  if (auditRetentionDays === null) return TARGETS;
  const audit: Target = { name: "auditEvents", table: "audit_events", key: "id", column: "created_at", cutoff: (now) => now - auditRetentionDays * DAY_MS };
  return [...TARGETS, audit];
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Deletes expired rows in bounded batches: each statement deletes at most `sweeper.batchSize`
 * rows (short transactions and locks; requests are served between batches), at most
 * MAX_BATCHES per table and sweep. Several instances may sweep one database: a row deleted by
 * one is simply not found by the other.
 */
export function createSweeper(app: App): Sweeper {
  const { intervalSec, batchSize, auditRetentionDays } = app.config.sweeper;
  const targets = targetsOf(auditRetentionDays);
  const sqlite = app.config.databaseUrl.startsWith("sqlite:");
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<SweepResult> | undefined;
  let stopped = false;

  async function sweepTable(target: Target, nowMs: number): Promise<number> {
    const cutoffMs = target.cutoff(nowMs);
    // SQLite keeps datetimes as epoch ms; PostgreSQL compares a timestamptz with an ISO string.
    const cutoff = target.epochMs || sqlite ? cutoffMs : new Date(cutoffMs).toISOString();
    const sql = `delete from ${target.table} where ${target.key} in (select ${target.key} from ${target.table} where ${target.column} < ? limit ?)`;
    let total = 0;
    for (let batch = 0; batch < MAX_BATCHES && !stopped; batch++) {
      const res = await app.orm.em.getConnection().execute<{ affectedRows: number }>(sql, [cutoff, batchSize], "run");
      total += res.affectedRows;
      if (res.affectedRows < batchSize) break;
      await yieldToEventLoop();
    }
    return total;
  }

  async function sweep(): Promise<SweepResult> {
    const nowMs = app.clock.now().getTime();
    const result: SweepResult = { sessions: 0, verifications: 0, deviceCodes: 0, rateLimits: 0, twoFactorChallenges: 0, auditEvents: 0 };
    for (const target of targets) result[target.name] = await sweepTable(target, nowMs);
    if (Object.values(result).some((n) => n > 0)) app.logger.info({ swept: result }, "expired rows swept");
    return result;
  }

  function sweepOnce(): Promise<SweepResult> {
    // One sweep at a time per instance: a caller during a sweep shares its result.
    running ??= sweep().finally(() => {
      running = undefined;
    });
    return running;
  }

  function schedule() {
    if (stopped || intervalSec === 0) return;
    // ±10% jitter: instances started together do not sweep in lockstep.
    const delayMs = intervalSec * 1000 * (0.9 + Math.random() * 0.2);
    timer = setTimeout(() => {
      sweepOnce()
        .catch((err: unknown) => app.logger.warn({ err }, "sweep failed; retrying at the next interval"))
        .finally(schedule);
    }, delayMs);
    timer.unref();
  }

  return {
    sweepOnce,
    start() {
      stopped = false;
      if (!timer) schedule();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      timer = undefined;
      await running?.catch(() => {});
    },
  };
}
