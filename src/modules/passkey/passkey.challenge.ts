import type { EntityManager } from "@mikro-orm/core";
import { z } from "zod";
import type { App } from "../../app.ts";
import { constantTimeEqual, sha256 } from "../../crypto/tokens.ts";
import { AuthError } from "../../errors.ts";
import { consumeVerification, storeVerification } from "../../core/index.ts";

/**
 * WebAuthn challenges (W3C WebAuthn L3 §13.4.3: random, at least 16 bytes, used once, verified
 * by the Relying Party). One verification row per ceremony, keyed by the SHA-256 of a random
 * token that only the browser holds, in the `passkey` cookie (better-auth's
 * `better-auth-passkey` cookie): a challenge made for one browser is useless from another.
 * The row keeps the challenge's SHA-256, never the challenge (docs/wire-contract.md §10). Five minutes,
 * better-auth's MAX_AGE_IN_SECONDS.
 */
const PURPOSE = "passkey-challenge";
export const CHALLENGE_COOKIE = "passkey";
export const CHALLENGE_TTL_SEC = 300;

export type Ceremony = "registration" | "authentication";

const valueSchema = z.object({
  type: z.enum(["registration", "authentication"]),
  challengeHash: z.string(),
  /** The signed-in user the options were made for; null for a usernameless sign-in. */
  userId: z.string().nullable(),
});

export type StoredChallenge = z.output<typeof valueSchema>;

/** Stores a challenge; returns the token for the cookie. */
export async function saveChallenge(app: App, em: EntityManager, type: Ceremony, challenge: string, userId: string | null): Promise<string> {
  const value = JSON.stringify({ type, challengeHash: sha256(challenge), userId } satisfies StoredChallenge);
  return (await storeVerification(app, em, PURPOSE, value, CHALLENGE_TTL_SEC)).token;
}

/**
 * Uses the cookie's challenge up, whatever comes next: a failed ceremony cannot be retried with
 * it; of two requests racing with one cookie, one gets it (core/single-use-tokens.ts
 * consumeVerification). A missing or unknown cookie, an expired or used row, or one of the other
 * ceremony: 400 CHALLENGE_NOT_FOUND.
 */
export async function consumeChallenge(app: App, em: EntityManager, token: string | null, type: Ceremony): Promise<StoredChallenge> {
  const value = token ? await consumeVerification(app, em, PURPOSE, token) : null;
  const parsed = value === null ? null : valueSchema.safeParse(JSON.parse(value));
  if (!parsed?.success || parsed.data.type !== type) throw new AuthError("CHALLENGE_NOT_FOUND");
  return parsed.data;
}

/**
 * simplewebauthn's `expectedChallenge` as a function (it accepts one since v7): the challenge in
 * clientDataJSON (L3 §7.1 step 12, §7.2 step 16) matches when its SHA-256 is the stored one.
 */
export function challengeMatcher(stored: StoredChallenge): (challenge: string) => boolean {
  return (challenge) => constantTimeEqual(sha256(challenge), stored.challengeHash);
}
