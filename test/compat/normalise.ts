/**
 * What may differ between two correct servers is taken out before comparing: ids (uuids here,
 * better-auth's random strings there) become `<id:N>` in order of first appearance, so "the
 * same id as before" still compares; dates become `<date>`; secrets (session, verification and
 * provider tokens, state, PKCE values, WebAuthn challenges) become `<token>`; user codes and
 * backup codes keep only their shape; an `otpauth://` URI becomes what an authenticator app
 * reads from it, its secret left out; a signed `oauth_query` keeps its parameters, its signature
 * and times become placeholders; each server's own origin becomes `<self>` and the
 * provider's `<provider>`, with query parameters sorted. Emails, usernames and provider
 * subjects are the same strings on both sides (each server has its own database), so they
 * compare as they are.
 */

const ISO_DATE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;
/** Keys holding ids of our records (accountId: only when it is such an id, e.g. a credential account's). */
const ID_KEY = /^(id|impersonatedBy)$|^(?!provider|client|account).*Id$/;
const TOKEN_KEY = /^(token|sessionToken|accessToken|refreshToken|idToken|access_token|refresh_token|id_token|device_code|deviceCode|codeVerifier|challenge|client_secret)$/;
/** Query parameters that carry secrets or per-flow randomness. */
const TOKEN_PARAM = new Set(["token", "state", "code", "code_challenge", "nonce", "device_code"]);
const USER_CODE = new Set(["user_code", "userCode"]);
/** `iss`: RFC 9207's issuer in an authorization response. */
const URL_PARAM = new Set(["redirect_uri", "callbackURL", "errorCallbackURL", "newUserCallbackURL", "redirectTo", "iss"]);
/**
 * The bookkeeping of an OpenID provider's signed `oauth_query` (the pages' query): the signature
 * and the times it was signed and expires (each server's own MAC, its own instant), and
 * Portcullis's digest of the session a consent step is bound to.
 */
const SIGNED_QUERY_PARAM: Record<string, string> = { sig: "<signature>", exp: "<date>", ba_iat: "<date>", pc_iat: "<date>", pc_sid: "<token>" };

export class Normaliser {
  private readonly ids = new Map<string, string>();

  /** `origins`: origin → its placeholder (`<self>`, `<provider>`). */
  constructor(private readonly origins: Record<string, string>) {}

  private id(raw: string): string {
    let placeholder = this.ids.get(raw);
    if (!placeholder) {
      placeholder = `<id:${this.ids.size + 1}>`;
      this.ids.set(raw, placeholder);
    }
    return placeholder;
  }

  value(value: unknown, key = ""): unknown {
    // The WebAuthn relying party (`rp: { id, name }`, `rpId`): configuration, compared as it is (no id placeholder).
    if (key === "rp" || key === "rpId") return value;
    if (value instanceof Date) return "<date>";
    if (Array.isArray(value)) return value.map((v) => this.value(v, key));
    if (value && typeof value === "object") {
      const out: Record<string, unknown> = {};
      for (const k of Object.keys(value).sort()) out[k] = this.value((value as Record<string, unknown>)[k], k);
      return out;
    }
    // Seconds left, computed at slightly different instants on each side: 604799 and 604800 are the same lifetime.
    if (key === "expires_in" && typeof value === "number") return Math.round(value / 10) * 10;
    // RFC 7591 §3.2.1 `client_id_issued_at`: a date in epoch seconds, a placeholder like the ISO dates (the two servers may straddle a second).
    if (key === "client_id_issued_at" && typeof value === "number") return "<date>";
    // A token response's `expires_at` (better-auth's oauth-provider, epoch seconds): a date, placeholder as above.
    if (key === "expires_at" && typeof value === "number") return "<date>";
    if (typeof value !== "string") return value;
    if (this.ids.has(value)) return this.ids.get(value);
    // An OpenID provider's client ids: each server's own random strings, compared as ids.
    if (key === "client_id" || key === "clientId") return this.id(value);
    if (TOKEN_KEY.test(key)) return "<token>";
    if (ID_KEY.test(key)) return this.id(value);
    if (USER_CODE.has(key)) return userCodeShape(value);
    if (key === "backupCodes") return value.replace(/[A-Za-z0-9]/g, "x");
    if (value.startsWith("otpauth://")) return otpauth(value);
    if (ISO_DATE.test(value)) return "<date>";
    if (/^https?:\/\//.test(value) || (URL_PARAM.has(key) && value.startsWith("/"))) return this.url(value);
    return value;
  }

  /** An absolute or relative URL: origin placeholder, path, sorted and normalised query. */
  url(raw: string): string {
    const relative = raw.startsWith("/");
    let url: URL;
    try {
      url = new URL(raw, "http://relative.invalid");
    } catch {
      return raw;
    }
    const origin = relative ? "" : (this.origins[url.origin] ?? url.origin);
    const params = [...url.searchParams].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    const query = params.map(([k, v]) => `${k}=${this.param(k, v)}`).join("&");
    // The reset link carries its token in the path (docs/wire-contract.md §4).
    const path = url.pathname.replace(/\/reset-password\/[^/]+$/, "/reset-password/<token>");
    return `${origin}${path}${query ? `?${query}` : ""}${url.hash}`;
  }

  private param(key: string, value: string): string {
    if (TOKEN_PARAM.has(key)) return "<token>";
    if (key in SIGNED_QUERY_PARAM) return SIGNED_QUERY_PARAM[key]!;
    // An RFC 6749 error redirect's description: human text, not compared (as error bodies' messages, runner.ts).
    if (key === "error_description") return "<message>";
    if (USER_CODE.has(key)) return userCodeShape(value);
    if (URL_PARAM.has(key)) return this.url(value);
    if (this.ids.has(value)) return this.ids.get(value)!;
    return value;
  }
}

/**
 * An `otpauth://` URI (Key Uri Format) as an authenticator app reads it: type, label (issuer and
 * account), issuer, and the parameters with their defaults when absent (SHA1, 6 digits, 30 s);
 * the secret only as "present".
 */
function otpauth(raw: string): unknown {
  const match = /^otpauth:\/\/([^/]+)\/([^?]*)\?(.*)$/.exec(raw);
  if (!match) return raw;
  const params = new URLSearchParams(match[3]);
  const known = new Set(["secret", "issuer", "algorithm", "digits", "period"]);
  return {
    type: match[1],
    label: decodeURIComponent(match[2]!),
    issuer: params.get("issuer"),
    algorithm: params.get("algorithm") ?? "SHA1",
    digits: params.get("digits") ?? "6",
    period: params.get("period") ?? "30",
    secret: /^[A-Z2-7]+=*$/i.test(params.get("secret") ?? "") ? "<base32 secret>" : params.get("secret"),
    ...Object.fromEntries([...params].filter(([k]) => !known.has(k))),
  };
}

/** `ABCD-EF23` → `XXXX-XXXX`: the format of a user code without its value. */
function userCodeShape(code: string): string {
  return code.replace(/[A-Z0-9]/g, "X").replace(/[a-z]/g, "x");
}

export const ABSENT = "(absent)";

export interface Difference {
  /** Where in the step record: `status`, `body.user.id`, `(step)` for a missing step. */
  path: string;
  betterAuth: unknown;
  portcullis: unknown;
}

/** Every leaf where the two normalised values differ. */
export function differences(a: unknown, b: unknown, path: string): Difference[] {
  if (Object.is(a, b)) return [];
  const bothObjects = a && b && typeof a === "object" && typeof b === "object" && Array.isArray(a) === Array.isArray(b);
  if (!bothObjects) return [{ path, betterAuth: a === undefined ? ABSENT : a, portcullis: b === undefined ? ABSENT : b }];
  const keys = Array.isArray(a)
    ? [...Array(Math.max(a.length, (b as unknown[]).length)).keys()].map(String)
    : [...new Set([...Object.keys(a as object), ...Object.keys(b as object)])].sort();
  return keys.flatMap((k) =>
    differences((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], Array.isArray(a) ? `${path}[${k}]` : `${path}.${k}`),
  );
}
