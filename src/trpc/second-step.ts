import type { Context } from "./context.ts";
import type { SecondStep } from "../core/index.ts";

/**
 * The cookies of a sign-in's second step (core/sign-in-gate.ts), better-auth's names: the
 * pending sign-in (`two_factor`, 5 minutes, single-use) and the trusted device (`trust_device`,
 * 30 days, rotated on every use). Their values are random tokens whose SHA-256 the database keeps.
 */
export const PENDING_COOKIE = "two_factor";
export const TRUST_COOKIE = "trust_device";
export const PENDING_TTL_SEC = 5 * 60;
export const TRUST_TTL_SEC = 30 * 24 * 3600;

/** The edge of a sign-in that proved its first factor: the pending cookie, or the rotated trust cookie. */
export function handOverSecondStep(ctx: Context, step: SecondStep | undefined): void {
  if (!step) return;
  ctx.effects.cookies ??= [];
  if (step.kind === "pending") {
    // As better-auth: the browser is signing in as someone, not yet signed in; an older session cookie goes.
    ctx.effects.sessionCookie = { clear: true };
    ctx.effects.cookies.push({ name: PENDING_COOKIE, value: step.pendingToken, maxAgeSec: PENDING_TTL_SEC });
  } else if (step.trustToken) {
    ctx.effects.cookies.push({ name: TRUST_COOKIE, value: step.trustToken, maxAgeSec: TRUST_TTL_SEC });
  }
}
