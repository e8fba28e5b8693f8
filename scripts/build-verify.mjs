// packages/verify (`@portcullis/verify`): its dist/ compiled from src/verify itself, every file
// there (whatever it exports later is in the package too). rootDir is src/verify, so a file there
// that imports a server file fails this build instead of shipping half the server. Run by
// scripts/build.mjs, so `npm ci` in the checkout (prepare) leaves it built: packing the workspace
// needs no script of its own.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "packages", "verify");
const sources = join(root, "src", "verify");

function newest(dir) {
  let ms = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) ms = Math.max(ms, statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return ms;
}

/**
 * tsc rewrites `./x.ts` to `./x.js` in the JavaScript but keeps `.ts` in the .d.ts files; the
 * declarations name the .js files instead (as scripts/build.mjs does for dist/).
 */
function declarationsImportJs(dir) {
  const specifier = /(\bfrom\s*|\bimport\s*\(\s*)(["'])(\.{1,2}\/[^"'\n]*?)\.ts\2/g;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!e.isFile() || !e.name.endsWith(".d.ts")) continue;
    const file = join(e.parentPath ?? e.path, e.name);
    const text = readFileSync(file, "utf8");
    const fixed = text.replace(specifier, "$1$2$3.js$2");
    if (fixed !== text) writeFileSync(file, fixed);
  }
}

export function ensureVerifyBuilt() {
  if (!existsSync(sources) || !existsSync(join(pkg, "tsconfig.json"))) return; // an installed package: nothing to build
  const out = join(pkg, "dist", "index.js");
  // the folder's own mtime too: a file deleted from src/verify changes it, and nothing else
  const inputs = [newest(sources), statSync(sources).mtimeMs, ...["tsconfig.json", "package.json"].map((f) => statSync(join(pkg, f)).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs];
  if (existsSync(out) && statSync(out).mtimeMs >= Math.max(...inputs)) return;
  rmSync(join(pkg, "dist"), { recursive: true, force: true }); // a file removed from src/verify leaves the package too
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(pkg, "tsconfig.json")], { cwd: pkg, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`@portcullis/verify build failed (tsc exited with ${result.status})`);
  declarationsImportJs(join(pkg, "dist"));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) ensureVerifyBuilt();
