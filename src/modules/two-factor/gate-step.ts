import { TwoFactor } from "../../db/entities/index.ts";
import type { SignInStep } from "../../core/index.ts";
import * as challenges from "./challenges.ts";

/**
 * Two-factor's step in the sign-in gate (core/sign-in-gate.ts): a user with two-factor on gets a
 * pending sign-in after a password, after a magic link or a mailed sign-in code unless
 * `twoFactor.skipForPasswordless` (a mailbox is one factor, like a password; better-auth asks
 * none), and after a social sign-in with `twoFactor.enforceOnSocial` (better-auth asks none after
 * OAuth), unless this browser is one of their trusted devices.
 */
export const twoFactorStep: SignInStep = {
  family: "two-factor",
  applies(app, user, way) {
    const { twoFactor } = app.config;
    if (!twoFactor.enabled || !user.twoFactorEnabled) return false;
    if (way === "passwordless") return !twoFactor.skipForPasswordless;
    return way === "password" || twoFactor.enforceOnSocial;
  },
  async begin(app, tx, user, { rememberMe, trustCookie }) {
    const trustToken = await challenges.rotateTrustedDevice(app, tx, user.id, trustCookie);
    if (trustToken) return { kind: "none", trustToken };
    const pendingToken = await challenges.createPendingSignIn(app, tx, user.id, rememberMe);
    const methods: string[] = [];
    if ((await tx.count(TwoFactor, { user: user.id, verified: true })) > 0) methods.push("totp");
    if (app.config.twoFactor.otp.enabled) methods.push("otp");
    return { kind: "pending", pendingToken, methods };
  },
};
