import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import { z } from "zod";
import type { App } from "../../app.ts";
import { constantTimeEqual, randomToken, sha256 } from "../../crypto/tokens.ts";
import { Verification } from "../../db/entities/index.ts";
import { AuthError } from "../../errors.ts";

/**
 * WebAuthn challenges (W3C WebAuthn L3 §13.4.3: random, at least 16 bytes, used once, verified
 * by the Relying Party). One verification row per ceremony, keyed by the SHA-256 of a random
 * token that only the browser holds, in the `passkey` cookie (better-auth's
 * `better-auth-passkey` cookie): a challenge made for one browser is useless from another.
 * The row keeps the challenge's SHA-256, never the challenge (CONTRACT.md §10). Five minutes,
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
  const token = randomToken(32);
  const now = app.clock.now();
  await em.insert(Verification, {
    id: randomUUID(),
    identifier: sha256(token),
    purpose: PURPOSE,
    value: JSON.stringify({ type, challengeHash: sha256(challenge), userId } satisfies StoredChallenge),
    expiresAt: new Date(now.getTime() + CHALLENGE_TTL_SEC * 1000),
    createdAt: now,
  });
  return token;
}

/**
 * Uses the cookie's challenge up, whatever comes next: a failed ceremony cannot be retried with
 * it. Two requests racing with the same cookie may both read the row; the one conditional
 * delete decides (the rule of oauth/state.ts). A missing or unknown cookie, an expired or used
 * row, or one of the other ceremony: 400 CHALLENGE_NOT_FOUND.
 */
export async function consumeChallenge(app: App, em: EntityManager, token: string | null, type: Ceremony): Promise<StoredChallenge> {
  if (!token || token.length < 20 || token.length > 200) throw new AuthError("CHALLENGE_NOT_FOUND");
  const identifier = sha256(token);
  const row = await em.findOne(Verification, { identifier, purpose: PURPOSE }, { disableIdentityMap: true });
  if (!row) throw new AuthError("CHALLENGE_NOT_FOUND");
  const now = app.clock.now();
  const deleted = await em.nativeDelete(Verification, { identifier, purpose: PURPOSE, expiresAt: { $gt: now } });
  if (deleted !== 1) {
    await em.nativeDelete(Verification, { id: row.id, expiresAt: { $lte: now } });
    throw new AuthError("CHALLENGE_NOT_FOUND");
  }
  const parsed = valueSchema.safeParse(JSON.parse(row.value));
  if (!parsed.success || parsed.data.type !== type) throw new AuthError("CHALLENGE_NOT_FOUND");
  return parsed.data;
}

/**
 * simplewebauthn's `expectedChallenge` as a function (it accepts one since v7): the challenge in
 * clientDataJSON (L3 §7.1 step 12, §7.2 step 16) matches when its SHA-256 is the stored one.
 */
export function challengeMatcher(stored: StoredChallenge): (challenge: string) => boolean {
  return (challenge) => constantTimeEqual(sha256(challenge), stored.challengeHash);
}
