import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * better-auth's signed session token, `<token>.<signature>`: its cookie value and what its
 * bearer plugin hands out in `set-auth-token`. The signature is HMAC-SHA256 keyed with the
 * better-auth secret itself (no derivation), in base64 (the cookie's; base64url also seen after
 * URL-decoding). Sessions imported from better-auth (src/import/) are stored as the SHA-256 of
 * the bare token, as ours are; this returns the bare token when the signature verifies under one
 * of `secrets` (list the better-auth secret in AUTH_SECRETS to keep signed tokens working), and
 * the input unchanged otherwise. Our own tokens never hold a dot, so they pass through at the
 * cost of one indexOf.
 */
const SIGNED = /^([A-Za-z0-9_-]{20,200})\.([A-Za-z0-9+/_-]{43}=?)$/;

export function unsignBetterAuthToken(value: string, secrets: readonly string[]): string {
  if (value.indexOf(".") === -1) return value;
  let text = value;
  if (text.includes("%")) {
    try {
      text = decodeURIComponent(text);
    } catch {
      return value;
    }
  }
  const match = SIGNED.exec(text);
  if (!match) return value;
  const [, token, signature] = match as unknown as [string, string, string];
  const given = Buffer.from(signature.replace(/-/g, "+").replace(/_/g, "/"), "base64");
  if (given.length !== 32) return value;
  let valid = false;
  // Every secret is tried (no early exit), as src/crypto/signing.ts does.
  for (const secret of secrets) valid = timingSafeEqual(createHmac("sha256", secret).update(token).digest(), given) || valid;
  return valid ? token : value;
}
