#!/usr/bin/env node
// `npm run build` / `prepare`: TypeScript to dist/ (ESM + .d.ts, tsconfig.build.json), only when a
// source is newer than the last build. bin/portcullis.cjs calls ensureBuilt() too, so a checkout
// whose sources moved (git pull) never starts stale code; an installed copy (no sources) skips it.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureConsoleBuilt } from "./build-console.mjs";
import { ensureClientBuilt } from "./build-client.mjs";
import { ensureVerifyBuilt } from "./build-verify.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stamp = join(root, "dist", ".build-stamp");
const inputs = ["src", "rest-bridge"];
const configs = ["tsconfig.json", "tsconfig.build.json", "package.json", "scripts/build.mjs"];

function newestSourceMs() {
  let newest = 0;
  for (const dir of inputs) {
    const abs = join(root, dir);
    if (!existsSync(abs)) continue;
    for (const entry of readdirSync(abs, { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && entry.name.endsWith(".ts")) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
    }
  }
  for (const file of configs) if (existsSync(join(root, file))) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return newest;
}

/** Whether dist/ is older than the sources (false when there are no sources: an installed copy). */
export function isStale() {
  if (!existsSync(join(root, "src"))) return false;
  return !existsSync(stamp) || statSync(stamp).mtimeMs < newestSourceMs();
}

export function build() {
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const started = Date.now();
  const result = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { cwd: root, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`build failed (tsc exited with ${result.status})`);
  declarationsImportJs();
  vendorScalar();
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return Date.now() - started;
}

/**
 * tsc rewrites `./x.ts` to `./x.js` in the JavaScript (rewriteRelativeImportExtensions) but keeps
 * `.ts` in the .d.ts files. TypeScript 5+ reads those; TypeScript 4 and tools that process
 * declarations on their own do not. The .d.ts files name the .js files instead, as hand-written
 * ESM declarations do (their .d.ts sits beside each .js).
 */
function declarationsImportJs() {
  const specifier = /(\bfrom\s*|\bimport\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g;
  for (const dir of inputs) {
    const abs = join(root, "dist", dir);
    if (!existsSync(abs)) continue;
    for (const entry of readdirSync(abs, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || !entry.name.endsWith(".d.ts")) continue;
      const file = join(entry.parentPath ?? entry.path, entry.name);
      const text = readFileSync(file, "utf8");
      const fixed = text.replace(specifier, "$1$2$3.js$2");
      if (fixed !== text) writeFileSync(file, fixed);
    }
  }
}

/**
 * The API reference page's renderer (a devDependency) goes into dist/vendor/, so an installed
 * package serves {base}/reference without it; the page falls back to node_modules in a checkout.
 */
function vendorScalar() {
  const source = join(root, "node_modules", "@scalar", "api-reference", "dist", "browser", "standalone.js");
  if (!existsSync(source)) return;
  mkdirSync(join(root, "dist", "vendor"), { recursive: true });
  copyFileSync(source, join(root, "dist", "vendor", "scalar-api-reference.js"));
}

export function ensureBuilt() {
  ensureConsoleBuilt(); // the admin console (dist/console), on its own staleness
  ensureClientBuilt(); // packages/client/dist (@portcullis/client), on its own staleness
  ensureVerifyBuilt(); // packages/verify/dist (@portcullis/verify, from src/verify), on its own staleness
  if (!isStale()) return;
  process.stderr.write("portcullis: building dist/ (sources changed since the last build) ...\n");
  const ms = build();
  process.stderr.write(`portcullis: built in ${(ms / 1000).toFixed(1)} s\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes("--if-stale")) ensureBuilt();
  else (build(), ensureConsoleBuilt(), ensureClientBuilt(), ensureVerifyBuilt());
}
