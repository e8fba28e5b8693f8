import type { App } from "../../app.ts";
import type { ResolvedConfig } from "../../config/index.ts";

/** The issuer (OIDC Discovery §3, RFC 8414 §2): `{publicUrl}{basePath}`, never a request header. */
export function issuerOf(config: ResolvedConfig): string {
  return `${config.publicUrl.replace(/\/+$/, "")}${config.basePath}`;
}

export function endpointOf(config: ResolvedConfig, path: string): string {
  return `${issuerOf(config)}${path}`;
}

/** The public URL's path, for the built-in pages (`{publicUrl}/sign-in`, `/consent`, `/account`). */
function publicPath(config: ResolvedConfig): string {
  return new URL(config.publicUrl).pathname.replace(/\/+$/, "");
}

export const signInPagePath = (config: ResolvedConfig) => `${publicPath(config)}/sign-in`;
export const consentPagePath = (config: ResolvedConfig) => `${publicPath(config)}/consent`;
export const accountPagePath = (config: ResolvedConfig) => `${publicPath(config)}/account`;

export function loginPageUrl(config: ResolvedConfig): string {
  return config.oidcProvider.loginPage ?? new URL(signInPagePath(config), config.publicUrl).toString();
}

export function consentPageUrl(config: ResolvedConfig): string {
  return config.oidcProvider.consentPage ?? new URL(consentPagePath(config), config.publicUrl).toString();
}

const LOOPBACK = new Set(["127.0.0.1", "[::1]", "localhost"]);

/**
 * Exact match with a registered redirect URI (RFC 9700 §4.1.3: no prefix, no wildcard, no
 * normalisation). A loopback redirect of a native app may differ only by port (RFC 8252 §7.3).
 */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true;
  if (!URL.canParse(requested)) return false;
  const req = new URL(requested);
  if (req.protocol !== "http:" || !LOOPBACK.has(req.hostname)) return false;
  return registered.some((r) => {
    if (!URL.canParse(r)) return false;
    const reg = new URL(r);
    return reg.protocol === "http:" && reg.hostname === req.hostname && reg.pathname === req.pathname && reg.search === req.search && reg.hash === "" && req.hash === "";
  });
}

/**
 * A redirect URI a client may register: absolute, no fragment (RFC 6749 §3.1.2), never a
 * script-capable scheme; http only for loopback (RFC 8252 §7.3) — a private-use scheme
 * (`com.example.app:/cb`, RFC 8252 §7.1) is allowed for native apps.
 */
export function isAcceptableRedirectUri(value: string): boolean {
  if (value.length > 2048 || !URL.canParse(value)) return false;
  const url = new URL(value);
  if (url.hash || value.includes("#")) return false;
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (["javascript", "data", "vbscript", "file", "blob", "about"].includes(scheme)) return false;
  if (scheme === "http") return LOOPBACK.has(url.hostname);
  if (scheme === "https") return url.hostname !== "";
  return /^[a-z][a-z0-9+.-]*\.[a-z0-9+.-]+$/.test(scheme);
}

/** RFC 6749 §3.3: space-delimited, no duplicates. */
export function parseScopes(raw: string | undefined | null): string[] {
  if (!raw) return [];
  return [...new Set(raw.split(" ").filter(Boolean))];
}

/** A RFC 8707 resource this service mints JWT access tokens for. */
export function acceptableResource(app: App, resource: string): boolean {
  const allowed = app.config.oidcProvider.resources;
  if (allowed) return allowed.includes(resource);
  if (resource.length > 2048 || !URL.canParse(resource) || resource.includes("#")) return false;
  const url = new URL(resource);
  return url.protocol === "https:" || (url.protocol === "http:" && LOOPBACK.has(url.hostname));
}

/** RFC 7636 §4.1: 43-128 unreserved characters (also the shape of an S256 challenge, §4.2). */
export const PKCE_VALUE = /^[A-Za-z0-9\-._~]{43,128}$/;
