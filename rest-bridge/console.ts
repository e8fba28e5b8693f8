import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import type { App } from "../src/app.ts";
import { AuthError } from "../src/errors.ts";

/**
 * The admin console (console/, built by scripts/build-console.mjs into dist/console/) at /admin:
 * static files only, read once into memory (re-read when a new build lands). Hashed assets are
 * cached for good; index.html is revalidated and answers every client route (/admin/users/…).
 * The page talks to the service only through the typed tRPC client on this origin.
 */
export const CONSOLE_PATH = "/admin";

/**
 * Only this origin's scripts, styles and API: no inline code, nothing from elsewhere, never framed.
 * `connect-src 'self'`: the typed client calls /api/trpc on this origin.
 */
export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; " +
  "base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

const SECURITY_HEADERS = {
  "content-security-policy": CONSOLE_CSP,
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cross-origin-opener-policy": "same-origin",
};

const TYPES: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".png": "image/png",
  ".ico": "image/x-icon",
  ".woff2": "font/woff2",
  ".json": "application/json; charset=utf-8",
};
const COMPRESSIBLE = new Set([".html", ".js", ".css", ".svg", ".json"]);

interface StaticFile {
  body: Buffer;
  gzip: Buffer | null;
  type: string;
  etag: string;
  immutable: boolean;
}

interface Build {
  stampMs: number;
  files: Map<string, StaticFile>;
}

/** dist/console beside the sources (tsx, vitest) or beside the compiled dist/rest-bridge/. */
function consoleDir(): string | null {
  for (const relative of ["../dist/console", "../console"]) {
    const dir = fileURLToPath(new URL(relative, import.meta.url));
    // The stamp marks a finished build (and tells dist/console from the console/ sources).
    if (existsSync(join(dir, ".build-stamp"))) return dir;
  }
  return null;
}

function load(dir: string, stampMs: number): Build {
  const files = new Map<string, StaticFile>();
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || entry.name.startsWith(".")) continue;
    const abs = join(entry.parentPath, entry.name);
    const rel = abs.slice(dir.length).split("\\").join("/");
    const ext = extname(entry.name);
    const body = readFileSync(abs);
    files.set(rel, {
      body,
      gzip: COMPRESSIBLE.has(ext) && body.length > 1024 ? gzipSync(body) : null,
      type: TYPES[ext] ?? "application/octet-stream",
      etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"`,
      // Vite names assets by their content hash: a new build has new names.
      immutable: rel.startsWith("/assets/"),
    });
  }
  return { stampMs, files };
}

function acceptsGzip(req: IncomingMessage): boolean {
  const accept = req.headers["accept-encoding"];
  return typeof accept === "string" && /\bgzip\b/.test(accept);
}

function send(req: IncomingMessage, res: ServerResponse, file: StaticFile) {
  const headers: Record<string, string | number> = {
    ...SECURITY_HEADERS,
    "content-type": file.type,
    "cache-control": file.immutable ? "public, max-age=31536000, immutable" : "no-cache",
    etag: file.etag,
    vary: "accept-encoding",
  };
  if (req.headers["if-none-match"] === file.etag) {
    res.writeHead(304, headers);
    res.end();
    return;
  }
  const gzip = file.gzip && acceptsGzip(req) ? file.gzip : null;
  const body = gzip ?? file.body;
  if (gzip) headers["content-encoding"] = "gzip";
  headers["content-length"] = body.length;
  res.writeHead(200, headers);
  res.end(req.method === "HEAD" ? undefined : body);
}

export interface ConsoleHandler {
  /** Whether a (normalised) path is the console's. */
  matches(path: string): boolean;
  serve(req: IncomingMessage, res: ServerResponse, path: string): void;
}

/** null when `adminConsole.enabled` is off: /admin is then an unknown path like any other. */
export function createConsoleHandler(app: App): ConsoleHandler | null {
  if (!app.config.adminConsole.enabled) return null;
  let build: Build | null = null;

  function current(): Build | null {
    const dir = consoleDir();
    if (!dir) return null;
    const stampMs = statSync(join(dir, ".build-stamp")).mtimeMs;
    if (!build || build.stampMs !== stampMs) build = load(dir, stampMs);
    return build;
  }

  return {
    matches: (path) => path === CONSOLE_PATH || path.startsWith(`${CONSOLE_PATH}/`),
    serve(req, res, path) {
      if (req.method !== "GET" && req.method !== "HEAD") throw new AuthError("NOT_FOUND");
      const files = current()?.files;
      if (!files) throw new AuthError("NOT_FOUND", { message: "The admin console is not built: `npm run build` builds it (Vite is a devDependency)" });
      const rel = path.slice(CONSOLE_PATH.length) || "/";
      const file = files.get(rel);
      if (file) return send(req, res, file);
      // A missing asset (or any file name, dot files too) stays missing; other paths are the app's client routes.
      if (rel.startsWith("/assets/") || extname(rel) !== "" || rel.includes("/.")) throw new AuthError("NOT_FOUND");
      const index = files.get("/index.html");
      if (!index) throw new AuthError("NOT_FOUND");
      send(req, res, index);
    },
  };
}
