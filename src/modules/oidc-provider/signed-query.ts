import type { App } from "../../app.ts";
import { sha256 } from "../../crypto/tokens.ts";
import { sign, verify } from "../../crypto/signing.ts";
import { AuthError } from "../../errors.ts";

/**
 * The authorize request handed to the sign-in and consent pages as `oauth_query` (better-auth's
 * oauth-provider wire): the request's parameters plus `exp`, the signing time and, for the
 * consent step, a digest of the session it was shown to, under an HMAC of the service secret.
 * A page can only send back a request this service made, unchanged, in time, and the consent
 * step only from the browser session that saw it (no CSRF, no replay of another user's request).
 * The query also lists its own parameter names as `ba_param` (signed with the rest): that list is
 * how better-auth's oauthProviderClient (1.6) finds the signed query in the page's address and
 * which parameters it sends back; without it the client sends no `oauth_query` at all.
 */

const SIG = "sig";
const EXP = "exp";
const ISSUED = "pc_iat";
const SESSION = "pc_sid";
/** better-auth's name for the list of signed parameter names (oauthProviderClient reads it). */
const NAMES = "ba_param";
const META = new Set([SIG, EXP, ISSUED, SESSION, NAMES]);
/** Time to sign in and decide. */
const SIGNED_FOR_SEC = 600;

export interface SignedRequest {
  params: Record<string, string>;
  /** When the request was signed (prompt=login is satisfied by a session created after it). */
  issuedAt: Date;
  /** Digest of the session the consent step is bound to. */
  sessionDigest: string | null;
}

function canonical(params: URLSearchParams): string {
  const entries = [...params.entries()].filter(([k]) => k !== SIG).sort(([a, av], [b, bv]) => (a === b ? (av < bv ? -1 : 1) : a < b ? -1 : 1));
  return new URLSearchParams(entries).toString();
}

export const sessionDigest = (sessionId: string) => sha256(`oauth-consent:${sessionId}`).slice(0, 32);

export function signQuery(app: App, params: Record<string, string>, opts: { sessionId?: string } = {}): string {
  const now = app.clock.now().getTime();
  const query = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (!META.has(k)) query.set(k, v);
  query.set(EXP, String(Math.floor(now / 1000) + SIGNED_FOR_SEC));
  query.set(ISSUED, String(now));
  if (opts.sessionId) query.set(SESSION, sessionDigest(opts.sessionId));
  for (const name of [...new Set([...query.keys(), NAMES])].sort()) query.append(NAMES, name);
  const signed = sign(canonical(query), app.secrets[0]!);
  query.set(SIG, signed.slice(signed.lastIndexOf(".") + 1));
  return query.toString();
}

/** The request a page sent back; 400 INVALID_OAUTH_QUERY when altered, unsigned or expired. */
export function verifyQuery(app: App, raw: string): SignedRequest {
  const query = new URLSearchParams(raw.startsWith("?") ? raw.slice(1) : raw);
  const sig = query.get(SIG);
  if (!sig || query.getAll(SIG).length !== 1 || verify(`${canonical(query)}.${sig}`, app.secrets) === null) throw new AuthError("INVALID_OAUTH_QUERY");
  const exp = Number(query.get(EXP));
  const issued = Number(query.get(ISSUED));
  if (!Number.isSafeInteger(exp) || !Number.isSafeInteger(issued) || exp * 1000 <= app.clock.now().getTime()) throw new AuthError("INVALID_OAUTH_QUERY");
  const params: Record<string, string> = {};
  for (const [k, v] of query.entries()) if (!META.has(k)) params[k] = v;
  return { params, issuedAt: new Date(issued), sessionDigest: query.get(SESSION) };
}
