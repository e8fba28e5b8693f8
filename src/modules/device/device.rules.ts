import { randomBytes } from "node:crypto";
import type { ResolvedConfig } from "../../config/index.ts";

/** RFC 8628 §6.1: no vowels that spell words, no 0/O, 1/I look-alikes. 32 characters: 5 bits each. */
export const USER_CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789";
export const USER_CODE_LENGTH = 8;

/** 8 characters, unbiased (256 is a multiple of 32): 40 bits of entropy, RFC 8628 §5.1. */
export function generateUserCode(): string {
  const bytes = randomBytes(USER_CODE_LENGTH);
  let code = "";
  for (const byte of bytes) code += USER_CODE_ALPHABET[byte & 31];
  return code;
}

/** Shown to people as `XXXX-XXXX` (RFC 8628 §6.1: easier to read and type). */
export function formatUserCode(code: string): string {
  return `${code.slice(0, 4)}-${code.slice(4)}`;
}

/**
 * RFC 8628 §6.1: accept the code in any case, with or without the dash (and spaces). Returns the
 * stored form, or null when the input cannot be a user code.
 */
export function normalizeUserCode(raw: string): string | null {
  if (raw.length > 32) return null;
  const code = raw.replace(/[\s-]/g, "").toUpperCase();
  if (code.length !== USER_CODE_LENGTH) return null;
  for (const c of code) if (!USER_CODE_ALPHABET.includes(c)) return null;
  return code;
}

/** Path of the built-in verification page: `{public URL path}/device`. */
export function devicePagePath(config: ResolvedConfig): string {
  return `${new URL(config.publicUrl).pathname.replace(/\/+$/, "")}/device`;
}

/** RFC 8628 §3.2 `verification_uri`, and §3.3.1 `verification_uri_complete` with the code in it. */
export function verificationUris(config: ResolvedConfig, userCode: string) {
  const uri = config.deviceAuthorization.verificationUri ?? new URL(devicePagePath(config), config.publicUrl).toString();
  const complete = new URL(uri);
  complete.searchParams.set("user_code", formatUserCode(userCode));
  return { verification_uri: uri, verification_uri_complete: complete.toString() };
}
