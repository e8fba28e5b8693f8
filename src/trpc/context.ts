import type { EntityManager } from "@mikro-orm/core";
import { parse as parseCookies } from "cookie";
import type { App } from "../app.ts";
import { unsignBetterAuthToken } from "../crypto/better-auth-token.ts";
import { readApiKey, resolveKeyPrincipal } from "../core/session/api-key-principal.ts";
import { resolveSession, type RequestInfo, type ResolvedSession } from "../core/session/sessions.ts";
import type { MaybePromise } from "../db/session-store/index.ts";

/** What a procedure asks the HTTP layer to do besides answering (both /api/auth and /api/trpc apply it). */
export interface Effects {
  /** Set (token + Max-Age, null Max-Age = browser-session cookie) or clear the session cookie. */
  sessionCookie?: { token: string; maxAgeSec: number | null } | { clear: true };
  /** `set-auth-token` header (docs/wire-contract.md §3). */
  authToken?: string;
  /** 302 target (REST bridge only; tRPC callers read it from the output). */
  redirect?: string;
  /**
   * Other cookies of ours, by name below the prefix (`admin_session` is sent as
   * `portcullis.admin_session`), with the session cookie's attributes; `maxAgeSec: 0` clears one.
   */
  cookies?: { name: string; value: string; maxAgeSec: number | null }[];
  /**
   * An HTML page with a form instead of the JSON answer (REST bridge only; tRPC callers read the
   * output): `formAction` lists the origins its form may post to or be redirected to (CSP form-action).
   */
  page?: { html: string; formAction: string[] };
  /** A failure answered as a redirect (`?error=CODE`): its code, for the metrics' sign-in outcomes. */
  failure?: string;
  headers: Record<string, string>;
  /** The REST answer's status instead of 200 (RFC 7591 §3.2.1: 201 Created). */
  status?: number;
}

export interface Context {
  app: App;
  /** `acceptLanguage`: the raw header, read by the mailer for the mail's locale; `accept`: the raw Accept (src/http/accept.ts). */
  req: RequestInfo & { requestId: string; origin: string | null; acceptLanguage: string | null; accept: string | null; authorization: string | null };
  /** Where the session token came from. */
  tokenSource: "bearer" | "cookie" | null;
  sessionToken: string | null;
  /**
   * The API key of the request's key header (`apiKey.apiKeyHeaders`): when present the request's
   * principal is the key's owner, not a session (core/session/api-key-principal.ts), and a bad
   * key fails getSession with 401 INVALID_API_KEY.
   */
  apiKey: string | null;
  effects: Effects;
  /** One EntityManager fork per request, made on first use. */
  readonly em: EntityManager;
  /** Resolves the session (or the API key's principal) once per request; null when absent, invalid, expired or banned. */
  getSession(): Promise<ResolvedSession | null>;
  /** The session's user once getSession resolved one (the procedure's trace span names it). */
  userId?: string;
  /** One of our other cookies, by its name below the prefix (see Effects.cookies). */
  readCookie(name: string): string | null;
}

export interface ContextInput {
  headers: Record<string, string | string[] | undefined>;
  ip?: string | null;
  requestId?: string;
}

/** What a request authenticates with: the API key header, else a session token (Bearer, then cookie). */
export interface Credentials {
  apiKey: string | null;
  token: string | null;
  source: "bearer" | "cookie" | null;
}

function header(headers: ContextInput["headers"], name: string): string | null {
  const v = headers[name];
  return (Array.isArray(v) ? v[0] : v) ?? null;
}

/** Full name of one of our cookies: `{prefix}.{name}`, `__Secure-` first on https (like the session cookie). */
export function ownCookieName(app: App, name: string): string {
  return `${app.origin.startsWith("https:") ? "__Secure-" : ""}${app.config.cookiePrefix}.${name}`;
}

export function readSessionToken(app: App, headers: ContextInput["headers"]) {
  const auth = header(headers, "authorization");
  if (auth && /^bearer\s+/i.test(auth)) {
    const token = auth.replace(/^bearer\s+/i, "").trim();
    // A better-auth signed token (`token.signature`) of an imported session: the bare token.
    if (token) return { token: unsignBetterAuthToken(token, app.secrets), source: "bearer" as const };
  }
  const cookieHeader = header(headers, "cookie");
  if (cookieHeader) {
    const token = parseCookies(cookieHeader)[app.cookieName];
    if (token) return { token: unsignBetterAuthToken(token, app.secrets), source: "cookie" as const };
  }
  return { token: null, source: null };
}

export function credentialsOf(app: App, headers: ContextInput["headers"]): Credentials {
  const apiKey = readApiKey(app, headers);
  return apiKey ? { apiKey, token: null, source: null } : { apiKey, ...readSessionToken(app, headers) };
}

/**
 * The request's principal, as the `session` builder reads it (src/trpc/init.ts): the API key's
 * owner, else the session; null when there is neither. A session whose expiry slid re-sends its
 * cookie through `effects` (to cookie callers only). A bad key throws (or rejects) its 401 or 429.
 * Synchronous when the answer is at hand (cached, or SQLite), as get-session is.
 */
export function resolvePrincipal(app: App, { apiKey, token, source }: Credentials, effects: Effects): MaybePromise<ResolvedSession | null> {
  if (apiKey) return resolveKeyPrincipal(app, apiKey);
  if (!token) return null;
  // Sliding expiry moved: re-send the cookie (browser clients only).
  const slid = (s: ResolvedSession | null) => {
    if (s?.extended && source === "cookie" && !effects.sessionCookie) {
      effects.sessionCookie = { token, maxAgeSec: app.config.session.expiresInSec };
    }
    return s;
  };
  const found = resolveSession(app, token);
  return found instanceof Promise ? found.then(slid) : slid(found);
}

export function createContext(app: App, input: ContextInput): Context {
  const credentials = credentialsOf(app, input.headers);
  const { apiKey, token, source } = credentials;
  let em: EntityManager | undefined;
  let session: Promise<ResolvedSession | null> | undefined;
  const ctx: Context = {
    app,
    req: {
      ip: input.ip ?? null,
      userAgent: header(input.headers, "user-agent"),
      requestId: input.requestId ?? crypto.randomUUID(),
      origin: header(input.headers, "origin"),
      acceptLanguage: header(input.headers, "accept-language"),
      accept: header(input.headers, "accept"),
      // Client authentication (RFC 6749 §2.3.1) and bearer tokens other than sessions (RFC 6750) read it raw.
      authorization: header(input.headers, "authorization"),
    },
    tokenSource: source,
    sessionToken: token,
    apiKey,
    effects: { headers: {} },
    get em() {
      em ??= app.orm.em.fork();
      return em;
    },
    readCookie(name) {
      const cookieHeader = header(input.headers, "cookie");
      return (cookieHeader && parseCookies(cookieHeader)[ownCookieName(app, name)]) || null;
    },
    getSession() {
      session ??= new Promise<ResolvedSession | null>((resolve) => resolve(resolvePrincipal(app, credentials, ctx.effects))).then((s) => {
        if (s) ctx.userId = s.user.id;
        return s;
      });
      return session;
    },
  };
  return ctx;
}
