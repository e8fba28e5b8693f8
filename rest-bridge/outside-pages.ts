import type { IncomingMessage, ServerResponse } from "node:http";
import type { App } from "../src/app.ts";
import { sendDevicePage } from "../src/modules/device/device.page.ts";
import { devicePagePath } from "../src/modules/device/device.rules.ts";
import { providerMetadata, rootMetadataPath, serveOidcPage } from "../src/modules/oidc-provider/index.ts";
import { sendJson } from "./errors.ts";

/**
 * The answers outside the base path that are no API route: the favicon, the device page, the
 * OpenID provider's pages and its root metadata. `serve` answers and returns the log label, or
 * returns null when the path is none of them.
 */
export function createOutsidePages(app: App) {
  const devicePage = devicePagePath(app.config);
  return function serve(req: IncomingMessage, res: ServerResponse, path: string): string | null {
    if (path === "/favicon.ico") {
      // Browsers ask on every page of ours: an empty answer, not a logged 404.
      res.writeHead(204, { "cache-control": "public, max-age=86400" }).end();
      return "favicon";
    }
    if (req.method !== "GET") return null;
    if (path === devicePage) {
      sendDevicePage(app, res); // RFC 8628 §3.3 verification URI, outside the base path
      return "device-page";
    }
    // The authorization flow's sign-in and consent pages, outside the base path.
    if (serveOidcPage(app, path, res)) return "oidc-page";
    if (rootMetadataPath(app.config, path)) {
      // RFC 8414 §3.1: the issuer's path inserted after the well-known segment.
      sendJson(res, 200, providerMetadata(app), { "cache-control": "public, max-age=300" });
      return "/.well-known";
    }
    return null;
  };
}
