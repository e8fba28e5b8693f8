// packages/client (`@portcullis/client`): its dist/ from its sources and the generated router
// declarations (scripts/client-types.ts writes packages/client/src/app-router.d.ts, committed).
// Run by scripts/build.mjs, so `npm ci` in the checkout (prepare) leaves it built: packing the
// workspace needs no script of its own.
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const pkg = join(root, "packages", "client");

function newest(dir) {
  let ms = 0;
  for (const e of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (e.isFile()) ms = Math.max(ms, statSync(join(e.parentPath ?? e.path, e.name)).mtimeMs);
  }
  return ms;
}

export function ensureClientBuilt() {
  if (!existsSync(join(pkg, "src"))) return; // an installed package: nothing to build
  const out = join(pkg, "dist", "index.js");
  const stale = !existsSync(out) || statSync(out).mtimeMs < Math.max(newest(join(pkg, "src")), statSync(join(pkg, "tsconfig.json")).mtimeMs);
  if (!stale) return;
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  const result = spawnSync(process.execPath, [tsc, "-p", join(pkg, "tsconfig.json")], { cwd: pkg, stdio: "inherit" });
  if (result.status !== 0) throw new Error(`@portcullis/client build failed (tsc exited with ${result.status})`);
  mkdirSync(join(pkg, "dist"), { recursive: true });
  copyFileSync(join(pkg, "src", "app-router.d.ts"), join(pkg, "dist", "app-router.d.ts"));
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) ensureClientBuilt();
