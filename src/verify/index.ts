/**
 * `portcullis/verify`: what another service needs to trust Portcullis's JWTs, offline
 * (docs/machine-access.md). jose only: no server code, no database driver. The JWK Set is fetched
 * once and cached (and fetched again when a token names a key it does not hold: a rotation);
 * every verify after that is local.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTPayload } from "jose";

export { errors };

export interface VerifierOptions {
  /** The service's issuer: `jwt.issuer`, by default its public URL. */
  issuer: string;
  /** The audience this service accepts; default the issuer (Portcullis's default `aud`). */
  audience?: string | string[];
  /** `{publicUrl}{basePath}/jwks`. */
  jwksUrl: string | URL;
  /** Seconds of clock skew allowed on `exp` and `nbf` (default 60). */
  clockToleranceSec?: number;
}

/** The claims a Portcullis token carries (src/modules/jwt/tokens.ts). */
export interface PortcullisClaims extends JWTPayload {
  /** The user. */
  sub: string;
  /** The session the token was issued for. */
  sid: string;
  email: string;
  role: string;
  /** RFC 8693 actor: the admin, when the session is an impersonation. */
  act?: { sub: string };
}

export interface Verifier {
  /** The token's claims, or a rejection (jose's `errors`: expired, bad signature, wrong issuer or audience, unknown key...). */
  verify(token: string): Promise<PortcullisClaims>;
}

/** Public-key algorithms only (RFC 8725 §3.1): never `none`, never an HMAC that a published key could forge. */
const ALGORITHMS = ["EdDSA", "ES256", "RS256"];

export function createVerifier(options: VerifierOptions): Verifier {
  const keys = createRemoteJWKSet(new URL(options.jwksUrl), { cooldownDuration: 30_000, cacheMaxAge: 10 * 60_000 });
  const verifyOptions = {
    issuer: options.issuer,
    audience: options.audience ?? options.issuer,
    algorithms: ALGORITHMS,
    typ: "JWT",
    clockTolerance: options.clockToleranceSec ?? 60,
    requiredClaims: ["sub", "exp", "iat"],
  };
  return {
    async verify(token) {
      const { payload } = await jwtVerify(token, keys, verifyOptions);
      return payload as PortcullisClaims;
    },
  };
}
