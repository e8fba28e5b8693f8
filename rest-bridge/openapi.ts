import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { gzip } from "node:zlib";
import type { App } from "../src/app.ts";
import { AuthError } from "../src/errors.ts";
import { checkRateLimit, type ClientIpOf } from "./guards.ts";

/**
 * `{base}/openapi.json` (the generated document, src/openapi) and `{base}/reference` (Scalar's
 * renderer, served from the installed package: never a CDN). Not routes of the table: they
 * document it. Everything is built on the first request and kept: the document depends only on
 * the config, the renderer only on the installed files.
 */

/** The renderer's browser bundle: the build's copy (dist/vendor), else the package itself. */
function scalarBundlePath(): string | null {
  const copies = [
    new URL("../vendor/scalar-api-reference.js", import.meta.url), // compiled: dist/rest-bridge → dist/vendor
    new URL("../dist/vendor/scalar-api-reference.js", import.meta.url), // sources: rest-bridge → dist/vendor
  ].map((u) => fileURLToPath(u));
  const copy = copies.find((file) => existsSync(file));
  if (copy) return copy;
  try {
    return createRequire(import.meta.url).resolve("@scalar/api-reference/browser/standalone.js");
  } catch {
    return null;
  }
}

interface Asset {
  body: Buffer;
  gzipped: Buffer;
  headers: Record<string, string>;
}

const gzipAsync = promisify(gzip);

async function asset(body: Buffer, headers: Record<string, string>): Promise<Asset> {
  return { body, gzipped: await gzipAsync(body), headers };
}

const escapeAttribute = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/**
 * Scalar reads its configuration from the `#api-reference` element (a JSON data block, never run).
 * No fonts from Scalar's CDN, no telemetry, no agent chat: the page talks to this service only, and
 * its CSP says so (test/browser/openapi-reference.test.ts watches for a violation in Chromium).
 */
function referencePage(app: App): { html: string; csp: string } {
  const base = app.config.basePath;
  const configuration = {
    url: `${base}/openapi.json`,
    withDefaultFonts: false,
    telemetry: false,
    showDeveloperTools: "never",
    // Scalar's AI agent chat calls its registry at api.scalar.com: off, the page stays on this service.
    agent: { disabled: true },
  };
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Portcullis API reference</title>
</head>
<body>
<noscript>The API reference needs JavaScript. The OpenAPI document itself: <a href="${escapeAttribute(`${base}/openapi.json`)}">${escapeAttribute(`${base}/openapi.json`)}</a></noscript>
<script id="api-reference" type="application/json" data-configuration="${escapeAttribute(JSON.stringify(configuration))}"></script>
<script src="${escapeAttribute(`${base}/reference/scalar.js`)}"></script>
</body>
</html>
`;
  // The "test request" client calls the service: its own origin and the configured public one.
  const connect = [...new Set(["'self'", app.origin])].join(" ");
  const csp = [
    "default-src 'none'",
    "script-src 'self'",
    // Scalar's components set style attributes and inject <style> elements.
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src ${connect}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; ");
  return { html, csp };
}

export interface OpenApiPages {
  /** Whether `path` (normalised, rest-bridge/paths.ts) is one of these pages. */
  serves(path: string): boolean;
  serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void>;
}

export function createOpenApiPages(app: App, ipOf: ClientIpOf): OpenApiPages {
  const base = app.config.basePath;
  const paths = { document: `${base}/openapi.json`, page: `${base}/reference`, script: `${base}/reference/scalar.js` };
  const built = new Map<string, Promise<Asset>>();

  function build(path: string): Promise<Asset> {
    if (path === paths.document) {
      // Loaded on first use: the serving process pays for the generator only when someone asks.
      return import("../src/openapi/index.ts").then(({ openApiDocument }) =>
        asset(Buffer.from(JSON.stringify(openApiDocument(app.config))), { "content-type": "application/json; charset=utf-8", "cache-control": "no-cache" }),
      );
    }
    if (path === paths.page) {
      const { html, csp } = referencePage(app);
      return asset(Buffer.from(html), {
        "content-type": "text/html; charset=utf-8",
        "content-security-policy": csp,
        "x-frame-options": "DENY",
        "referrer-policy": "no-referrer",
        "cache-control": "no-cache",
      });
    }
    const file = scalarBundlePath();
    if (!file) return Promise.reject(new AuthError("NOT_FOUND", { message: "The API reference renderer (@scalar/api-reference) is not installed" }));
    return readFile(file).then((body) => asset(body, { "content-type": "text/javascript; charset=utf-8", "cache-control": "public, max-age=3600" }));
  }

  function cached(path: string): Promise<Asset> {
    let pending = built.get(path);
    if (!pending) {
      pending = build(path);
      built.set(path, pending);
      pending.catch(() => built.delete(path)); // a failure (renderer missing) is tried again next time
    }
    return pending;
  }

  return {
    serves: (path) => path === paths.document || path === paths.page || path === paths.script,
    async serve(req, res, path) {
      if (req.method !== "GET" && req.method !== "HEAD") throw new AuthError("NOT_FOUND");
      await checkRateLimit(app, ipOf(req), path.slice(base.length));
      const { body, gzipped, headers } = await cached(path);
      const gz = /\bgzip\b/.test(String(req.headers["accept-encoding"] ?? ""));
      const out = gz ? gzipped : body;
      res.writeHead(200, {
        ...headers,
        "x-content-type-options": "nosniff",
        vary: "accept-encoding",
        ...(gz ? { "content-encoding": "gzip" } : {}),
        "content-length": out.length,
      });
      res.end(req.method === "HEAD" ? undefined : out);
    },
  };
}
