import { Secret, TOTP } from "otpauth";

/**
 * RFC 6238 TOTP through `otpauth`: HMAC-SHA-1, 6 digits, 30-second steps (what every
 * authenticator app reads from an `otpauth://` URI), ±1 step of clock drift (§5.2).
 */
const PERIOD_SEC = 30;
const DIGITS = 6;
const WINDOW = 1;

/** A fresh 160-bit secret (RFC 4226 §4 recommends 160 bits), base32 as authenticator apps take it. */
export function newTotpSecret(): string {
  return new Secret({ size: 20 }).base32;
}

function totp(secretBase32: string, issuer = "", account = ""): TOTP {
  return new TOTP({ issuer, label: account, algorithm: "SHA1", digits: DIGITS, period: PERIOD_SEC, secret: Secret.fromBase32(secretBase32) });
}

/** `otpauth://totp/<issuer>:<account>?secret=…&issuer=…` (Key Uri Format): issuer and account shown by the app. */
export function totpUri(secretBase32: string, issuer: string, account: string): string {
  return totp(secretBase32, issuer, account).toString();
}

/**
 * The time step a code belongs to when it is valid at `nowMs` (within ±1 step), else null. The
 * caller records the step so that a code, once accepted, is never accepted again (§5.2).
 */
export function totpStep(secretBase32: string, code: string, nowMs: number): number | null {
  if (!/^[0-9]{6}$/.test(code)) return null;
  const delta = totp(secretBase32).validate({ token: code, timestamp: nowMs, window: WINDOW });
  return delta === null ? null : Math.floor(nowMs / 1000 / PERIOD_SEC) + delta;
}

/** The code for `nowMs` (tests and the admin console's preview; never sent anywhere). */
export function totpCode(secretBase32: string, nowMs: number): string {
  return totp(secretBase32).generate({ timestamp: nowMs });
}
