import type { App } from "../app.ts";
import { AuthError } from "../errors.ts";

export function isTrustedOrigin(app: App, origin: string): boolean {
  if (origin === app.origin) return true;
  return app.config.trustedOrigins.some((o) => new URL(o).origin === origin);
}

/**
 * Open-redirect defence (docs/wire-contract.md §3): a callback is a relative path ("/x", never "//x" or
 * "/\x") or an absolute http(s) URL on a trusted origin.
 */
export function assertSafeCallback(app: App, url: string | undefined): void {
  if (url === undefined || url === "") return;
  if (url.startsWith("/") && !url.startsWith("//") && !url.startsWith("/\\") && !/[\r\n\t]/.test(url)) return;
  if (URL.canParse(url)) {
    const parsed = new URL(url);
    if ((parsed.protocol === "https:" || parsed.protocol === "http:") && isTrustedOrigin(app, parsed.origin)) return;
  }
  throw new AuthError("INVALID_CALLBACK_URL");
}
