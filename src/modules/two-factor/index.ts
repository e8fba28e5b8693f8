import type { Family } from "../../core/index.ts";
import { TwoFactorChallenge } from "../../db/entities/index.ts";
import { removeTwoFactor } from "./enrollment.service.ts";
import { twoFactorStep } from "./gate-step.ts";

export { resetTwoFactor } from "./admin-reset.ts";
export { twoFactorDoc } from "./two-factor.openapi.ts";
export { twoFactorRouter } from "./two-factor.router.ts";

/**
 * Two-factor in the kernel: its step in the sign-in gate, and what it holds for a user. Sign out
 * everywhere ends pending sign-ins (the password proven, a code to come) and trusted devices; a
 * changed password ends the pending sign-ins the old one started; the removal of an unproven
 * account's credentials removes the enrollment a squatter may have set up.
 */
export const twoFactorFamily: Family = {
  name: "two-factor",
  signInSteps: [twoFactorStep],
  holding: {
    async signedOutEverywhere(_app, tx, userId) {
      await tx.nativeDelete(TwoFactorChallenge, { user: userId, kind: { $in: ["sign-in", "trusted-device"] } });
    },
    async passwordChanged(_app, tx, userId) {
      await tx.nativeDelete(TwoFactorChallenge, { user: userId, kind: "sign-in" });
    },
    async removed(app, tx, userId, removal) {
      if (removal.accounts !== "none") await removeTwoFactor(app, tx, userId);
    },
  },
};
