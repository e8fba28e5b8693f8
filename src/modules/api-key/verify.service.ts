import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { ApiKey } from "../../db/entities/index.ts";
import { AuthError, ERRORS } from "../../errors.ts";
import { claimKeyUse, isBanActive } from "../../core/index.ts";
import { keyRecord, type KeyRecord } from "./keys.service.ts";

export type VerifyAnswer = { valid: true; error: null; key: KeyRecord } | { valid: false; error: { code: string; message: string }; key: null };

const refused = (code: "INVALID_API_KEY" | "KEY_NOT_FOUND" | "USAGE_EXCEEDED" | "RATE_LIMITED"): VerifyAnswer => ({
  valid: false,
  error: { code, message: ERRORS[code][1] },
  key: null,
});

/**
 * POST /api-key/verify and the library's verifyApiKey (better-auth's `{ valid, error, key }`):
 * for trusted callers only. A use is spent as on a request with the key (quota, rate limit).
 * Every key that authenticates nobody answers INVALID_API_KEY; a key without the asked
 * `permissions` KEY_NOT_FOUND (better-auth's code).
 */
export async function verifyKey(app: App, em: EntityManager, key: string, permissions?: Record<string, string[]>): Promise<VerifyAnswer> {
  if (key.length < 16 || key.length > 512) return refused("INVALID_API_KEY");
  const found = await em.findOne(ApiKey, { keyHash: sha256(key) }, { populate: ["user"] });
  const now = app.clock.now();
  if (!found || !found.enabled || (found.expiresAt && found.expiresAt.getTime() <= now.getTime())) return refused("INVALID_API_KEY");
  const owner = found.user.getEntity();
  if (isBanActive({ banned: owner.banned, banExpires: owner.banExpires ?? null }, now)) return refused("INVALID_API_KEY");
  if (permissions) {
    const granted = found.permissions ? (JSON.parse(found.permissions) as Record<string, string[]>) : {};
    const ok = Object.entries(permissions).every(([resource, actions]) => Object.hasOwn(granted, resource) && actions.every((a) => granted[resource]!.includes(a)));
    if (!ok) return refused("KEY_NOT_FOUND");
  }
  const windowMs = found.rateLimitTimeWindow ?? null;
  const max = found.rateLimitMax ?? null;
  const refillAmount = found.refillAmount ?? null;
  const refillIntervalMs = found.refillInterval ?? null;
  try {
    await claimKeyUse(app, {
      id: found.id,
      userId: owner.id,
      enabled: true,
      expiresAt: found.expiresAt ?? null,
      createdAt: found.createdAt,
      rateLimit: found.rateLimitEnabled && windowMs !== null && max !== null ? { windowMs, max } : null,
      quota: found.remaining == null ? null : refillAmount !== null && refillIntervalMs !== null ? { refillAmount, refillIntervalMs } : { refillAmount: null, refillIntervalMs: null },
    }, now);
  } catch (err) {
    if (err instanceof AuthError && (err.authCode === "USAGE_EXCEEDED" || err.authCode === "RATE_LIMITED")) return refused(err.authCode);
    throw err;
  }
  return { valid: true, error: null, key: keyRecord(await em.fork().findOneOrFail(ApiKey, { id: found.id })) };
}
