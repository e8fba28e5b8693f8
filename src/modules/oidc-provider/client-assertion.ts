import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { Verification } from "../../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { loadJose } from "../../core/index.ts";
import { endpointOf, issuerOf } from "./oidc-provider.rules.ts";

/**
 * `private_key_jwt` client authentication (OIDC Core §9, RFC 7523 §2.2, §3): the client signs a
 * short JWT with a key it registered (`jwks`), instead of sending a secret. `iss` and `sub` are
 * its client_id, `aud` this issuer or its token endpoint, `exp` at most ASSERTION_MAX_SEC ahead,
 * `jti` used once: its digest is kept until `exp` (a unique single-use record), so a replayed
 * assertion is refused. Asymmetric algorithms only: `none` and HMAC (a shared secret the
 * service does not hold) never verify.
 */

export const ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer";
export const ASSERTION_ALGS = ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"];
/** How far ahead an assertion's `exp` may be: how long its `jti` is remembered. */
const ASSERTION_MAX_SEC = 300;
const CLOCK_SKEW_SEC = 30;
const PURPOSE = "client-assertion";

/** The client an assertion names (`sub`, unverified: only to find its keys); null when it is no JWT. */
export async function assertionSubject(assertion: string): Promise<string | null> {
  if (assertion.length > 8192) return null;
  const jose = await loadJose();
  try {
    const sub = jose.decodeJwt(assertion).sub;
    return typeof sub === "string" ? sub : null;
  } catch {
    return null;
  }
}

/** Whether the assertion authenticates the client with these registered keys (every failure is the same invalid_client). */
export async function verifyAssertion(app: App, em: EntityManager, clientId: string, jwks: string, assertion: string): Promise<boolean> {
  const jose = await loadJose();
  const now = app.clock.now();
  let payload: { exp?: number; jti?: string };
  try {
    const keys = jose.createLocalJWKSet(JSON.parse(jwks) as { keys: never[] });
    ({ payload } = await jose.jwtVerify(assertion, keys, {
      algorithms: ASSERTION_ALGS,
      issuer: clientId,
      subject: clientId,
      audience: [issuerOf(app.config), endpointOf(app.config, "/oauth2/token")],
      requiredClaims: ["exp", "jti"],
      currentDate: now,
      clockTolerance: CLOCK_SKEW_SEC,
    }));
  } catch {
    return false;
  }
  const nowSec = Math.floor(now.getTime() / 1000);
  if (payload.exp! > nowSec + ASSERTION_MAX_SEC || typeof payload.jti !== "string" || payload.jti.length > 256) return false;
  return spendJti(app, em, clientId, payload.jti, payload.exp! + CLOCK_SKEW_SEC);
}

/** Records the jti until the assertion expires; false when it was recorded already (a replay). */
async function spendJti(app: App, em: EntityManager, clientId: string, jti: string, untilSec: number): Promise<boolean> {
  const now = app.clock.now();
  try {
    await em.insert(Verification, {
      id: crypto.randomUUID(),
      identifier: sha256(`${PURPOSE}\u0000${clientId}\u0000${jti}`),
      purpose: PURPOSE,
      value: clientId,
      expiresAt: new Date(untilSec * 1000),
      createdAt: now,
    });
    return true;
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException) return false;
    throw err;
  }
}
