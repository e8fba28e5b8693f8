import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../app.ts";
import type { UserRow } from "../db/session-store/index.ts";
import type { GateUser, SecondStep, WayIn } from "./registry.ts";

const NONE: SecondStep = { kind: "none", trustToken: null };

/** Whether a sign-in of `user` by `way` meets a step at all (password sign-in's fast path skips the gate's transaction when none does). */
export function hasSecondStep(app: App, user: GateUser, way: WayIn = "password"): boolean {
  return app.registry.signInSteps.some((step) => step.applies(app, user, way));
}

/**
 * THE gate every way in passes (the steps are families', core/registry.ts SignInStep) once its first factor is proven, inside the transaction that
 * would issue the session: the first registered step that applies decides (a pending sign-in
 * instead of a session, or none); with none registered or applying, the session is issued.
 */
export async function secondStep(app: App, tx: EntityManager, user: GateUser, way: WayIn, opts: { rememberMe: boolean; trustCookie: string | null }): Promise<SecondStep> {
  const step = app.registry.signInSteps.find((s) => s.applies(app, user, way));
  return step ? step.begin(app, tx, user, opts) : NONE;
}

/** A sign-in's outcome: a session (token and cookie lifetime), or a pending second step (token null). */
export interface SignedIn {
  token: string | null;
  cookieMaxAgeSec: number | null;
  user: UserRow;
  secondStep?: SecondStep;
}
