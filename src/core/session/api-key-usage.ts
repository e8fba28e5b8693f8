import { raw } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { ApiKey } from "../../db/entities/index.ts";
import type { KeyPrincipal } from "../../db/session-store/index.ts";
import { AuthError } from "../../errors.ts";

/*
 * One use of a key with limits (docs/machine-access.md "Quotas and rate limits"): each step is a
 * conditional UPDATE that changes the row only while its guard still holds, so two requests
 * racing for the last use (or the last request of a window) cannot both pass, on SQLite (one
 * writer) as on PostgreSQL (READ COMMITTED re-checks the WHERE on the row it waited for).
 */

/** Spends one request of the key's window, then one of its `remaining`; throws 429 RATE_LIMITED / USAGE_EXCEEDED. */
export async function claimKeyUse(app: App, key: KeyPrincipal, now: Date): Promise<void> {
  const em = app.orm.em.fork();
  if (key.rateLimit && !(await claimWindow(em, key.id, key.rateLimit, now))) {
    throw new AuthError("RATE_LIMITED", { headers: { "retry-after": String(Math.ceil(key.rateLimit.windowMs / 1000)) } });
  }
  if (key.quota && !(await claimRemaining(em, key.id, key.quota, now))) throw new AuthError("USAGE_EXCEEDED");
}

type Em = ReturnType<App["orm"]["em"]["fork"]>;

/**
 * better-auth's window: counted from the last request; past `windowMs` since it, the count starts
 * again at 1. The increment is tried first, then the reset, then the increment once more (a
 * concurrent reset may have just opened the window).
 */
async function claimWindow(em: Em, id: string, limit: { windowMs: number; max: number }, now: Date): Promise<boolean> {
  const windowStart = new Date(now.getTime() - limit.windowMs);
  const increment = () =>
    em.nativeUpdate(ApiKey, { id, lastRequest: { $gt: windowStart }, requestCount: { $lt: limit.max } }, { requestCount: raw("request_count + 1"), lastRequest: now });
  if ((await increment()) === 1) return true;
  const reset = await em.nativeUpdate(ApiKey, { id, $or: [{ lastRequest: null }, { lastRequest: { $lte: windowStart } }] }, { requestCount: 1, lastRequest: now });
  if (reset === 1) return true;
  return (await increment()) === 1;
}

/** A due refill sets `remaining` to the refill amount less this use; otherwise one is taken while any is left. */
async function claimRemaining(em: Em, id: string, quota: NonNullable<KeyPrincipal["quota"]>, now: Date): Promise<boolean> {
  if (quota.refillAmount !== null) {
    const due = new Date(now.getTime() - quota.refillIntervalMs);
    const refilled = await em.nativeUpdate(
      ApiKey,
      { id, $or: [{ lastRefillAt: { $lt: due } }, { lastRefillAt: null, createdAt: { $lt: due } }] },
      { remaining: quota.refillAmount - 1, lastRefillAt: now },
    );
    if (refilled === 1) return true;
  }
  return (await em.nativeUpdate(ApiKey, { id, remaining: { $gt: 0 } }, { remaining: raw("remaining - 1") })) === 1;
}
