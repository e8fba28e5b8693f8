import type { App } from "../app.ts";

/**
 * `{public URL}{base}{path}?{query}`: the links mails carry. The public URL, not the request's
 * Host header, so a forged Host can never point a link at someone else's server.
 */
export function actionLink(app: App, path: string, query: Record<string, string | undefined>): string {
  const url = new URL(`${app.config.publicUrl.replace(/\/+$/, "")}${app.config.basePath}${path}`);
  for (const [key, value] of Object.entries(query)) {
    if (value !== undefined && value !== "") url.searchParams.set(key, value);
  }
  return url.toString();
}

/**
 * A callback URL (already checked by assertSafeCallback) with extra query parameters. Relative
 * callbacks resolve against the public URL, where the app that asked for them lives.
 */
export function callbackWith(app: App, callbackURL: string, query: Record<string, string>): string {
  const url = new URL(callbackURL, app.config.publicUrl);
  for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
  return url.toString();
}
