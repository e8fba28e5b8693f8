import { defineEntity } from "../mikro-orm.ts";
import type { InferEntity } from "@mikro-orm/core";
import { User } from "./user.ts";

/**
 * A user's TOTP enrollment (better-auth's `twoFactor` model). The secret is AES-256-GCM sealed
 * (aad names the user); `lastTotpStep` makes each accepted code single-use (RFC 6238 §5.2);
 * `failedCount`/`lockedUntil` cap consecutive failures across pending sign-ins.
 */
export const TwoFactor = defineEntity({
  name: "TwoFactor",
  tableName: "two_factors",
  properties: (p) => ({
    id: p.uuid().primary(),
    user: p.manyToOne(User).ref().deleteRule("cascade").unique("two_factors_user_id_unique"),
    secret: p.text(),
    verified: p.boolean().default(false),
    lastTotpStep: p.bigint("number").nullable(),
    failedCount: p.integer().default(0),
    lockedUntil: p.datetime().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  }),
});

export type ITwoFactor = InferEntity<typeof TwoFactor>;

/** One backup code, by its SHA-256: using it is one conditional delete (single-use under races). */
export const TwoFactorBackupCode = defineEntity({
  name: "TwoFactorBackupCode",
  tableName: "two_factor_backup_codes",
  properties: (p) => ({
    id: p.uuid().primary(),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("two_factor_backup_codes_user_id_index"),
    codeHash: p.string().length(64).unique("two_factor_backup_codes_code_hash_unique"),
    createdAt: p.datetime(),
  }),
});

export type ITwoFactorBackupCode = InferEntity<typeof TwoFactorBackupCode>;

/**
 * Short-lived two-factor state keyed by a token digest: a pending sign-in (`sign-in`, 5 min,
 * the `two_factor` cookie), a trusted device (`trusted-device`, 30 days, the `trust_device`
 * cookie), or an email OTP sent to a signed-in user (`session`, keyed by the session id).
 * `attempts` counts verifications (5 at most); `otpHash`/`otpExpiresAt` hold the mailed code (keyed digest).
 */
export const TwoFactorChallenge = defineEntity({
  name: "TwoFactorChallenge",
  tableName: "two_factor_challenges",
  properties: (p) => ({
    id: p.uuid().primary(),
    tokenHash: p.string().length(64).unique("two_factor_challenges_token_hash_unique"),
    kind: p.string().length(16),
    user: p.manyToOne(User).ref().deleteRule("cascade").index("two_factor_challenges_user_id_index"),
    rememberMe: p.boolean().default(true),
    attempts: p.integer().default(0),
    otpHash: p.string().length(64).nullable(),
    otpExpiresAt: p.datetime().nullable(),
    expiresAt: p.datetime().index("two_factor_challenges_expires_at_index"),
    createdAt: p.datetime(),
  }),
});

export type ITwoFactorChallenge = InferEntity<typeof TwoFactorChallenge>;
