#!/usr/bin/env node
// The admin console (console/, Vite + React) into dist/console/, which the service serves at /admin
// (rest-bridge/console.ts). scripts/build.mjs runs ensureConsoleBuilt() wherever it builds (prepare,
// npm run build, the first start of a checkout), so `npm install && npm start` set it up; nothing
// here is committed. Rebuilt only when a console source (or the typed client it bundles) is newer.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const sources = join(root, "console");
export const consoleOutDir = join(root, "dist", "console");
/** Written last: rest-bridge/console.ts serves the folder only when it is there (a finished build). */
const stamp = join(consoleOutDir, ".build-stamp");
/** Besides console/: what the bundle is made of or how. */
const alsoInputs = ["src/client/index.ts", "src/core/audit-actions.ts", "scripts/build-console.mjs", "package.json"];

function newestInputMs() {
  let newest = 0;
  for (const entry of readdirSync(sources, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath ?? entry.path, entry.name)).mtimeMs);
  }
  for (const file of alsoInputs) if (existsSync(join(root, file))) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  return newest;
}

/** Whether dist/console is missing or older than its sources (false without sources: an installed copy). */
export function isConsoleStale() {
  if (!existsSync(sources)) return false;
  return !existsSync(stamp) || statSync(stamp).mtimeMs < newestInputMs();
}

/** The Vite CLI, or null when devDependencies are not installed (`npm install --omit=dev`). */
function viteBin() {
  try {
    return join(dirname(createRequire(import.meta.url).resolve("vite/package.json")), "bin", "vite.js");
  } catch {
    return null;
  }
}

/** Builds the console; false (and a line on stderr) when Vite is not installed. Throws when the build fails. */
export function buildConsole() {
  const vite = viteBin();
  if (!vite) {
    process.stderr.write("portcullis: the admin console is not built: Vite (a devDependency) is not installed; /admin answers 404\n");
    return false;
  }
  const result = spawnSync(process.execPath, [vite, "build", "--config", join(sources, "vite.config.mjs"), "--logLevel", "warn"], {
    cwd: root,
    stdio: "inherit",
  });
  if (result.status !== 0) throw new Error(`admin console build failed (vite exited with ${result.status})`);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
  return true;
}

export function ensureConsoleBuilt() {
  if (!isConsoleStale()) return;
  process.stderr.write("portcullis: building the admin console (dist/console) ...\n");
  const started = Date.now();
  if (buildConsole()) process.stderr.write(`portcullis: admin console built in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  if (process.argv.includes("--if-stale")) ensureConsoleBuilt();
  else buildConsole();
}
