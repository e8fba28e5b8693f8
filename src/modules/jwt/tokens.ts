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

async function sign(app: App, key: SigningKey, { session, user }: SessionWithUser): Promise<{ token: string; expMs: number }> {
  const jose = await loadJose();
  const iat = Math.floor(app.clock.now().getTime() / 1000);
  const exp = iat + app.config.jwt.expirationTime;
  // RFC 8693 §4.1: an impersonation's token names the admin acting as the user.
  const act = session.impersonatedBy ? { act: { sub: session.impersonatedBy } } : {};
  const token = await new jose.SignJWT({ sid: session.id, email: user.email, role: user.role, ...act })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, typ: "JWT" })
    .setSubject(user.id)
    .setIssuer(issuerOf(app))
    .setAudience(audienceOf(app))
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .sign(key.privateKey);
  return { token, expMs: exp * 1000 };
}


interface Cached {
  token: string;
  expMs: number;
  kid: string;
}

/** Tokens handed out with get-session, per instance: session id + the user row's version → token. */
const caches = new WeakMap<App, Map<string, Cached>>();
const MAX_CACHED = 10_000;

/**
 * The session's token, for GET /token and the `set-auth-jwt` header of get-session (on every
 * call): signed once per session and user version, and handed out again while it has at least
 * half its lifetime left and its key still signs (signing costs ~10x a session check). A changed
 * user (email, role) is a new `updatedAt`, so a new token; a revoked session never reaches here.
 * Synchronous when cached: get-session's hot path.
 */
export function sessionJwt(app: App, value: SessionWithUser): string | Promise<string> {
  let cache = caches.get(app);
  if (!cache) caches.set(app, (cache = new Map()));
  const key = `${value.session.id}|${value.user.updatedAt.getTime()}`;
  const nowMs = app.clock.now().getTime();
  const hit = cache.get(key);
  const current = signingKey(app);
  const kid = current instanceof Promise ? null : current.kid;
  if (hit && hit.kid === kid && hit.expMs - nowMs >= (app.config.jwt.expirationTime * 1000) / 2) return hit.token;
  return (async () => {
    const signer = await current;
    const signed = await sign(app, signer, value);
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, { token: signed.token, expMs: signed.expMs, kid: signer.kid });
    return signed.token;
  })();
}
