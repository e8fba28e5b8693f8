import { randomUUID } from "node:crypto";
import type { EntityManager } from "@mikro-orm/core";
import { z } from "zod";
import type { App } from "../../app.ts";
import { randomToken, sha256 } from "../../crypto/tokens.ts";
import { Verification } from "../../db/entities/index.ts";

/**
 * The OAuth `state` (RFC 6749 §10.12, RFC 9700 §4.7): 256 random bits that go to the provider
 * and come back, and one verification row keyed by their SHA-256 that holds everything the
 * callback needs, the PKCE verifier included. Ten minutes to live, used up on first use.
 */
const PURPOSE = "oauth-state";
export const STATE_TTL_MS = 10 * 60 * 1000;

const stateValueSchema = z.object({
  provider: z.string(),
  callbackURL: z.string().nullable(),
  errorCallbackURL: z.string().nullable(),
  newUserCallbackURL: z.string().nullable(),
  codeVerifier: z.string(),
  /** Set by /link-social: the callback links to this user instead of signing in. */
  linkUserId: z.string().nullable(),
  scopes: z.array(z.string()),
  nonce: z.string().nullable(),
});

export type OAuthState = z.output<typeof stateValueSchema>;

export async function saveState(app: App, em: EntityManager, value: OAuthState): Promise<string> {
  const state = randomToken(32);
  const now = app.clock.now();
  await em.insert(Verification, {
    id: randomUUID(),
    identifier: sha256(state),
    purpose: PURPOSE,
    value: JSON.stringify(stateValueSchema.parse(value)),
    expiresAt: new Date(now.getTime() + STATE_TTL_MS),
    createdAt: now,
  });
  return state;
}

/**
 * Uses a state up. Two callbacks racing with the same state may both read the row; the single
 * conditional `DELETE ... WHERE identifier = ? AND expires_at > now` decides, and only the one
 * whose delete removed the row goes on (the same rule as verification tokens).
 */
export async function consumeState(app: App, em: EntityManager, state: string): Promise<OAuthState | null> {
  if (state.length < 20 || state.length > 200) return null;
  const identifier = sha256(state);
  const row = await em.findOne(Verification, { identifier, purpose: PURPOSE }, { disableIdentityMap: true });
  if (!row) return null;
  const now = app.clock.now();
  const deleted = await em.nativeDelete(Verification, { identifier, purpose: PURPOSE, expiresAt: { $gt: now } });
  if (deleted !== 1) {
    await em.nativeDelete(Verification, { id: row.id, expiresAt: { $lte: now } });
    return null;
  }
  const parsed = stateValueSchema.safeParse(JSON.parse(row.value));
  return parsed.success ? parsed.data : null;
}
