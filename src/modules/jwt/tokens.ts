import type { App } from "../../app.ts";
import type { SessionWithUser } from "../../db/session-store/index.ts";
import { loadJose, signingKey, type SigningKey } from "../../core/index.ts";

/**
 * The JWT a session is worth to other services (docs/machine-access.md): `sub` the user, `sid`
 * the session, the user's `email` and `role`, `iss` and `aud` the service (or `jwt.issuer`,
 * `jwt.audience`), `iat`, `exp` `jwt.expirationTime` later. Only these claims: better-auth puts
 * the whole user row in, which every service that sees the token would then hold.
 */
export function issuerOf(app: App): string {
  return app.config.jwt.issuer ?? app.config.publicUrl.replace(/\/+$/, "");
}

export function audienceOf(app: App): string | string[] {
  return app.config.jwt.audience ?? issuerOf(app);
}

/** The claims a session's token carries besides `iss`, `aud`, `iat` and `exp`: what a cached token must still match. */
interface SessionClaims {
  sub: string;
  sid: string;
  email: string;
  role: string;
  /** RFC 8693 §4.1: an impersonation's token names the admin acting as the user. */
  actor: string | null;
}

const claimsOf = ({ session, user }: SessionWithUser): SessionClaims => ({
  sub: user.id,
  sid: session.id,
  email: user.email,
  role: user.role,
  actor: session.impersonatedBy,
});

interface Cached extends SessionClaims {
  token: string;
  iatMs: number;
  kid: string;
  /** The user row's `updatedAt` when signed: any change to the user signs anew, claim or not. */
  userVersion: number;
}

async function sign(app: App, key: SigningKey, claims: SessionClaims, userVersion: number): Promise<Cached> {
  const jose = await loadJose();
  const iat = Math.floor(app.clock.now().getTime() / 1000);
  const exp = iat + app.config.jwt.expirationTime;
  const act = claims.actor ? { act: { sub: claims.actor } } : {};
  const token = await new jose.SignJWT({ sid: claims.sid, email: claims.email, role: claims.role, ...act })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .setSubject(claims.sub)
    .setIssuer(issuerOf(app))
    .setAudience(audienceOf(app))
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { ...claims, token, iatMs: iat * 1000, kid: key.kid, userVersion };
}

/** Tokens handed out, per instance and session (an API key's principal: per key), the newest of each. */
const caches = new WeakMap<App, Map<string, Cached>>();
const MAX_CACHED = 10_000;
/** A token is handed out again only within the first quarter of its lifetime: every caller gets at least three quarters of `jwt.expirationTime`. */
const REUSE_FRACTION = 0.25;

/** The cached token still says what a token signed now would, and is young enough to hand out. */
function reusable(app: App, hit: Cached, { session, user }: SessionWithUser, kid: string | null, nowMs: number): boolean {
  return (
    hit.kid === kid &&
    hit.sub === user.id &&
    hit.email === user.email &&
    hit.role === user.role &&
    hit.actor === session.impersonatedBy &&
    hit.userVersion === user.updatedAt.getTime() &&
    // A clock set back would otherwise hand out a token issued "in the future".
    nowMs >= hit.iatMs &&
    nowMs - hit.iatMs <= app.config.jwt.expirationTime * 1000 * REUSE_FRACTION
  );
}

/**
 * The session's token, for GET /token and the `set-auth-jwt` header of get-session (on every
 * call), signed once and handed out again while it is young and still says what the session
 * says (signing costs ~10x a session check). Only reached with a session the caller has just
 * resolved (core/session: revoked, expired, signed-out and banned sessions never get here, within
 * the session cache's own bound), and compared claim by claim with it (and the user row's
 * `updatedAt`, which two changes in one millisecond may share): a token never tells more, or
 * staler, than the get-session answer of the same request. A changed email or role is a new
 * token at once; `iat` and `exp` are the signing's own. Synchronous when cached: get-session's
 * hot path.
 */
export function sessionJwt(app: App, value: SessionWithUser): string | Promise<string> {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = new Map()));
  const hit = cache.get(value.session.id);
  const current = signingKey(app);
  const kid = current instanceof Promise ? null : current.kid;
  if (hit && reusable(app, hit, value, kid, app.clock.now().getTime())) return hit.token;
  const claims = claimsOf(value);
  return (async () => {
    const signed = await sign(app, await current, claims, value.user.updatedAt.getTime());
    cache.delete(claims.sid);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(claims.sid, signed);
    return signed.token;
  })();
}
