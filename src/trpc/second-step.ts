import type { Context } from "./context.ts";
import { PENDING_COOKIE, PENDING_TTL_SEC, TRUST_COOKIE, TRUST_TTL_SEC } from "../modules/two-factor/challenges.ts";
import type { SecondStep } from "../core/sign-in-gate.ts";

export const TRUST_COOKIE_NAME = TRUST_COOKIE;

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
