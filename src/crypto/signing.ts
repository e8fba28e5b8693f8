import { createHmac, hkdfSync } from "node:crypto";
import { constantTimeEqual } from "./tokens.ts";

/**
 * Signed cookie values: `<value>.<HMAC-SHA256, base64url>`. The MAC key is derived from the
 * service secret with HKDF (RFC 5869) under its own label, so it is never the AEAD key too.
 * `verify` takes every accepted secret, newest first, so a secret can rotate: values signed
 * under an older one still verify until they expire; `sign` always uses the newest.
 */

const KEY_BYTES = 32;

function macKey(secret: string): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "portcullis/signing", "hmac-sha256 key", KEY_BYTES));
}

function mac(value: string, secret: string): string {
  return createHmac("sha256", macKey(secret)).update(value).digest("base64url");
}

export function sign(value: string, secret: string): string {
  return `${value}.${mac(value, secret)}`;
}

/** The value when one of `secrets` signed it, else null. Signatures compare in constant time. */
export function verify(signed: string, secrets: readonly string[]): string | null {
  const dot = signed.lastIndexOf(".");
  if (dot < 0) return null;
  const value = signed.slice(0, dot);
  const signature = signed.slice(dot + 1);
  let valid = false;
  // Every secret is tried (no early exit): the time taken says nothing about which one matched.
  for (const secret of secrets) valid = constantTimeEqual(signature, mac(value, secret)) || valid;
  return valid ? value : null;
}

/**
 * A keyed digest (hex) of a low-entropy secret, such as a 6-digit code: SHA-256 alone would be
 * reversed offline from a leaked row in a million guesses; the HMAC key never leaves the service.
 */
export function keyedDigest(value: string, secret: string): string {
  return createHmac("sha256", macKey(secret)).update(value).digest("hex");
}

/** Whether `digest` is keyedDigest(value) under one of `secrets` (each tried, constant time). */
export function keyedDigestMatches(value: string, digest: string, secrets: readonly string[]): boolean {
  let valid = false;
  for (const secret of secrets) valid = constantTimeEqual(digest, keyedDigest(value, secret)) || valid;
  return valid;
}
