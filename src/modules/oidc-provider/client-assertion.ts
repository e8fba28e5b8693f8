import type { EntityManager } from "@mikro-orm/core";
import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { Verification } from "../../db/entities/index.ts";
import { UniqueConstraintViolationException } from "../../db/mikro-orm.ts";
import { loadJose } from "../../core/index.ts";
import { endpointOf, issuerOf } from "./oidc-provider.rules.ts";
import { remoteKeySet, type KeySet } from "./remote-jwks.ts";

/**
 * `private_key_jwt` client authentication (OIDC Core §9, RFC 7523 §2.2, §3): the client signs a
 * short JWT with a key it registered (`jwks`) or publishes (`jwks_uri`, remote-jwks.ts), instead of sending a secret. `iss` and `sub` are
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

type Verified = { exp?: number; jti?: string } | "no-key" | null;

/** The assertion's payload when one of `keys` verifies it; "no-key" when none is its key (a kid the set lacks). */
async function verifyWith(app: App, clientId: string, keys: KeySet, assertion: string): Promise<Verified> {
  const jose = await loadJose();
  try {
    const { payload } = await jose.jwtVerify(assertion, jose.createLocalJWKSet(keys as { keys: never[] }), {
      algorithms: ASSERTION_ALGS,
      issuer: clientId,
      subject: clientId,
      audience: [issuerOf(app.config), endpointOf(app.config, "/oauth2/token")],
      requiredClaims: ["exp", "jti"],
      currentDate: app.clock.now(),
      clockTolerance: CLOCK_SKEW_SEC,
    });
    return payload;
  } catch (err) {
    return (err as { code?: unknown }).code === "ERR_JWKS_NO_MATCHING_KEY" ? "no-key" : null;
  }
}

/**
 * Whether the assertion authenticates the client with its registered keys, inline or fetched
 * from its `jwks_uri` (every failure, a failed fetch too, is the same invalid_client).
 */
export async function verifyAssertion(app: App, em: EntityManager, clientId: string, source: { jwks: string | null; jwksUri: string | null }, assertion: string): Promise<boolean> {
  let payload: Verified;
  if (source.jwksUri) {
    const keys = await remoteKeySet(app, clientId, source.jwksUri, { unknownKid: false });
    payload = keys ? await verifyWith(app, clientId, keys, assertion) : null;
    if (payload === "no-key") {
      // A key the cached set lacks: the client may have rotated (refetched at most once a minute).
      const fresher = await remoteKeySet(app, clientId, source.jwksUri, { unknownKid: true });
      payload = fresher ? await verifyWith(app, clientId, fresher, assertion) : null;
    }
  } else if (source.jwks) {
    payload = await verifyWith(app, clientId, JSON.parse(source.jwks) as KeySet, assertion);
  } else {
    return false;
  }
  if (payload === null || payload === "no-key") return false;
  const nowSec = Math.floor(app.clock.now().getTime() / 1000);
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
