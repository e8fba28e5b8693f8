import type { App } from "../../app.ts";
import { sweeperOf, type SweepTable } from "../../db/sweep.ts";
import { DEVICE_CODE_GRACE_MS } from "../device/index.ts";

export interface SweepResult {
  sessions: number;
  verifications: number;
  deviceCodes: number;
  rateLimits: number;
  twoFactorChallenges: number;
  auditEvents: number;
  emailOtps: number;
  apiKeys: number;
  oauthCodes: number;
  oauthAccessTokens: number;
  oauthRefreshTokens: number;
}

export interface Sweeper {
  /** One full sweep now, by the app's clock (tests move the injected clock, then call this). */
  sweepOnce(): Promise<SweepResult>;
  /** Sweeps every `sweeper.intervalSec` (a timer that never keeps the process alive). */
  start(): void;
  /** Stops the schedule and waits for a sweep in progress. */
  stop(): Promise<void>;
}

export interface SweeperOptions {
  /**
   * Wall-clock time one sweep may spend deleting (default SWEEP_BUDGET_MS). Checked between
   * rounds (one batch of every table with expired rows), so each table gets a batch per sweep.
   */
  budgetMs?: number;
}

/**
 * A minute of deleting per sweep: at the default 500 rows a statement that is over a million
 * expired sessions per sweep on PostgreSQL (bench/scale.ts measures it), far beyond the million
 * per hour a large deployment expires; a bigger backlog goes on at the next sweep.
 */
export const SWEEP_BUDGET_MS = 60_000;

interface Target extends SweepTable {
  name: keyof SweepResult;
  /** The cutoff for this table, from now (ms since the epoch). */
  cutoff(nowMs: number): number;
}

const TARGETS: Target[] = [
  // Expired sessions are refused by every lookup already; the rows only take space.
  { name: "sessions", table: "sessions", column: "expires_at", cutoff: (now) => now },
  // Email verification, password reset and OAuth state records: single use, dead once expired;
  // the digests of used ID tokens (oauth/id-token-ledger.ts), which expire with their tokens.
  { name: "verifications", table: "verifications", column: "expires_at", cutoff: (now) => now },
  // Expired device codes stay a day, so that a late poll still gets expired_token (RFC 8628 §3.5).
  { name: "deviceCodes", table: "device_codes", column: "expires_at", cutoff: (now) => now - DEVICE_CODE_GRACE_MS },
  // Counters of the database rate-limit store whose window has passed (epoch ms; the library
  // stamps them by the wall clock, compared here with the app's clock: the same one in production).
  { name: "rateLimits", table: "rate_limits", column: "expire", cutoff: (now) => now, epochMs: true },
  // Pending two-factor sign-ins, trusted devices and mailed codes: dead once expired.
  { name: "twoFactorChallenges", table: "two_factor_challenges", column: "expires_at", cutoff: (now) => now },
  // email-otp's codes (dead ones included: OTP_EXPIRED and TOO_MANY_ATTEMPTS are answered until they expire).
  { name: "emailOtps", table: "email_otps", column: "expires_at", cutoff: (now) => now },
  // API keys past their expiry: refused on every request already (cached or not), and deleted
  // by better-auth too; keys that never expire (null) are never swept.
  { name: "apiKeys", table: "api_keys", column: "expires_at", cutoff: (now) => now },
  // The OpenID provider's tokens, refused once expired (rotated refresh tokens included: their
  // reuse is told apart only until they expire). A code (60 s) stays while a token of its grant
  // lives, so that its replay still revokes them (RFC 6749 §4.1.2).
  { name: "oauthAccessTokens", table: "oauth_access_tokens", column: "expires_at", cutoff: (now) => now },
  { name: "oauthRefreshTokens", table: "oauth_refresh_tokens", column: "expires_at", cutoff: (now) => now },
  {
    name: "oauthCodes", table: "oauth_codes", column: "expires_at", cutoff: (now) => now,
    keepWhile:
      "exists (select 1 from oauth_refresh_tokens r where r.grant_id = oauth_codes.id and r.revoked_at is null and r.expires_at >= ?)" +
      " or exists (select 1 from oauth_access_tokens a where a.grant_id = oauth_codes.id and a.revoked_at is null and a.expires_at >= ?)",
  },
];

const DAY_MS = 24 * 3600 * 1000;

/** The expiring tables, and the audit trail past `sweeper.auditRetentionDays` when one is set. */
function targetsOf(auditRetentionDays: number | null): Target[] {
  if (auditRetentionDays === null) return TARGETS;
  const audit: Target = { name: "auditEvents", table: "audit_events", column: "created_at", cutoff: (now) => now - auditRetentionDays * DAY_MS };
  return [...TARGETS, audit];
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * Deletes expired rows in bounded batches: each statement deletes at most `sweeper.batchSize`
 * rows (its own short transaction; requests are served between batches). A sweep goes round
 * the tables one batch each until every table is done or the time budget is spent. Several
 * instances may sweep one database: a row deleted by one is simply not found by the other.
 */
export function createSweeper(app: App, options: SweeperOptions = {}): Sweeper {
  const { intervalSec, batchSize, auditRetentionDays } = app.config.sweeper;
  const budgetMs = options.budgetMs ?? SWEEP_BUDGET_MS;
  const targets = targetsOf(auditRetentionDays);
  const deleteBatch = sweeperOf(app.orm, app.dialect);
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<SweepResult> | undefined;
  let stopped = false;

  async function sweep(): Promise<SweepResult> {
    const nowMs = app.clock.now().getTime();
    const startedMs = performance.now();
    const result: SweepResult = {
      sessions: 0, verifications: 0, deviceCodes: 0, rateLimits: 0, twoFactorChallenges: 0, auditEvents: 0, emailOtps: 0, apiKeys: 0,
      oauthCodes: 0, oauthAccessTokens: 0, oauthRefreshTokens: 0,
    };
    let pending = targets;
    while (pending.length > 0 && !stopped) {
      const next: Target[] = [];
      for (const target of pending) {
        const deleted = await deleteBatch(target, target.cutoff(nowMs), batchSize);
        result[target.name] += deleted;
        // A short batch means nothing expired is left (as of this sweep's clock).
        if (deleted === batchSize) next.push(target);
        await yieldToEventLoop();
      }
      pending = next;
      if (pending.length > 0 && performance.now() - startedMs >= budgetMs) {
        app.logger.info({ swept: result, left: pending.map((t) => t.name) }, "sweep time budget spent; the rest at the next sweep");
        break;
      }
    }
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
