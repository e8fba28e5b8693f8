/**
 * Two-factor steps the scenarios share, and TOTP codes computed as an authenticator app does
 * (`otpauth`, from the secret in the URI the server gave).
 *
 * Portcullis accepts each TOTP code once (RFC 6238 §5.2): a code of a step at or before
 * the last accepted one is refused, better-auth accepts it again. So the codes a scenario has
 * accepted belong to successive steps of the ±1-step window: `-1` (30 s ago), then `0` (now),
 * then `+1` (in 30 s), on both servers. Only the replay scenario reuses one, on purpose.
 */
import { Secret, TOTP } from "otpauth";
import type { Actor } from "../actor.ts";
import { PASSWORD, type Run } from "../runner.ts";
import { sleep } from "../targets.ts";
import { signUp, type Person } from "./helpers.ts";

const PERIOD_MS = 30_000;
export type Step = -1 | 0 | 1;

/** The base32 secret of an `otpauth://` URI. */
export function secretOf(uri: string | undefined): string | null {
  return uri ? new URL(uri).searchParams.get("secret") : null;
}

/**
 * Near the end of a step, waits for the next one: a code computed now must still be inside the
 * server's window (±1 step around the server's now) when the request arrives.
 */
async function awayFromStepEdge(): Promise<void> {
  const left = PERIOD_MS - (Date.now() % PERIOD_MS);
  if (left < 2_000) await sleep(left + 50);
}

const codeAt = (secret: string, timestamp: number) => new TOTP({ secret: Secret.fromBase32(secret) }).generate({ timestamp });

/** The code of the step `step` steps away from now. */
export async function totpCode(secret: string, step: Step): Promise<string> {
  await awayFromStepEdge();
  return codeAt(secret, Date.now() + step * PERIOD_MS);
}

/** Six digits that are none of the window's codes. */
export async function wrongTotpCode(secret: string): Promise<string> {
  await awayFromStepEdge();
  const now = Date.now();
  const window = new Set([-1, 0, 1].map((step) => codeAt(secret, now + step * PERIOD_MS)));
  for (let n = 123_456; ; n = (n + 1) % 1_000_000) {
    const code = String(n).padStart(6, "0");
    if (!window.has(code)) return code;
  }
}

/** A different six-digit code than `code` (a wrong mailed code). */
export const otherCode = (code: string) => String((Number(code) + 1) % 1_000_000).padStart(6, "0");

export interface Enrolled extends Person {
  secret: string;
  backupCodes: string[];
}

/**
 * Sign-up, /two-factor/enable, then the first code (step -1) turns two-factor on: a user whose
 * next password sign-in asks for the second step. The session stays signed in.
 */
export async function enrolled(s: Run, name: string, extra: { username?: string } = {}): Promise<Enrolled> {
  const person = await signUp(s, name, extra);
  const enabled = await s.call(`enable ${name}`, person.actor, (c) => c.twoFactor.enable({ password: PASSWORD }));
  const secret = s.need(secretOf(enabled?.totpURI), "the TOTP secret");
  const code = await totpCode(secret, -1);
  await s.call(`activate ${name}`, person.actor, (c) => c.twoFactor.verifyTotp({ code }));
  return { ...person, secret, backupCodes: s.need(enabled?.backupCodes, "backup codes") };
}

/** A password sign-in in browser `browser` (a new one when given a name): the pending second step. */
export async function signInPending(s: Run, person: Person, browser: string | Actor): Promise<Actor> {
  const actor = typeof browser === "string" ? s.actor(browser) : browser;
  await s.call(`sign-in in ${actor.name}`, actor, (c) => c.signIn.email({ email: person.email, password: PASSWORD }));
  return actor;
}
