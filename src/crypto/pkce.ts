import { createHash } from "node:crypto";
import { randomToken } from "./tokens.ts";

/**
 * RFC 7636 §4.1: a high-entropy verifier of 43-128 unreserved characters. 32 random bytes in
 * base64url are 43 characters of [A-Za-z0-9_-], all unreserved.
 */
export function createCodeVerifier(): string {
  return randomToken(32);
}

/** RFC 7636 §4.2: S256 only (`plain` would hand the verifier to anyone who sees the URL). */
export function codeChallengeS256(verifier: string): string {
  return createHash("sha256").update(verifier, "ascii").digest("base64url");
}
