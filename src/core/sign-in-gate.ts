import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import { TwoFactor } from "../db/entities/index.ts";
import * as challenges from "../modules/two-factor/challenges.ts";

/** What a sign-in that proved the first factor does next. */
export type SecondStep =
  /** No second step: 2FA off (for this user or this service), or a trusted device (its cookie rotated). */
  | { kind: "none"; trustToken: string | null }
  /** `{ twoFactorRedirect: true, twoFactorMethods }` and the `two_factor` cookie; no session yet. */
  | { kind: "pending"; pendingToken: string; methods: string[] };

/** Whether a sign-in of `user` that proved the first factor meets the gate at all (two-factor on, for the service and the user). */
export function hasSecondStep(app: App, user: { twoFactorEnabled: boolean }): boolean {
  return app.config.twoFactor.enabled && user.twoFactorEnabled;
}

/**
 * The gate every way in that presents a password passes (and OAuth sign-in with
 * `twoFactor.enforceOnSocial`), inside the transaction that would issue the session: a user with
 * two-factor on gets a pending sign-in instead, unless this browser is one of their trusted devices.
 */
export async function secondStep(
  app: App,
  tx: EntityManager,
  user: { id: string; twoFactorEnabled: boolean },
  rememberMe: boolean,
  trustCookie: string | null,
): Promise<SecondStep> {
  if (!hasSecondStep(app, user)) return { kind: "none", trustToken: null };
  const trustToken = await challenges.rotateTrustedDevice(app, tx, user.id, trustCookie);
  if (trustToken) return { kind: "none", trustToken };
  const pendingToken = await challenges.createPendingSignIn(app, tx, user.id, rememberMe);
  const methods: string[] = [];
  if ((await tx.count(TwoFactor, { user: user.id, verified: true })) > 0) methods.push("totp");
  if (app.config.twoFactor.otp.enabled) methods.push("otp");
  return { kind: "pending", pendingToken, methods };
}
