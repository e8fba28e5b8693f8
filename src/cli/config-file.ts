import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { extname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { PortcullisConfig } from "../config/index.ts";
import { oneLine, StartupError } from "./startup-errors.ts";

/**
 * The config module (`--config <file>` or PORTCULLIS_CONFIG): its default export. `.ts`, `.mts`
 * and `.cts` files go through tsx's loader API, loaded only then, so a TypeScript config works
 * under plain Node from any directory (in an ESM package or not); JavaScript is imported as is.
 */

const TS = new Set([".ts", ".mts", ".cts"]);

type TsImport = (specifier: string, parent: string) => Promise<Record<string, unknown>>;

async function tsImport(url: string): Promise<Record<string, unknown>> {
  const api = (await import("tsx/esm/api")) as unknown as { tsImport: TsImport };
  return api.tsImport(url, import.meta.url);
}

/** esbuild's "file:3:10: ERROR: Expected ..." as "line 3, column 10: Expected ...". */
function esbuildLocation(message: string): string | undefined {
  const m = /:(\d+):(\d+): ERROR: (.*)/.exec(message);
  return m ? `line ${m[1]}, column ${Number(m[2]) + 1}: ${m[3]}` : undefined;
}

/**
 * Node's SyntaxError for a module names no line; `node --check` on the file does (first line of
 * its output, `/path/file.mjs:4`), as esbuild does for TypeScript. Run only on this error path.
 */
function syntaxDetail(file: string, err: Error): string {
  const check = spawnSync(process.execPath, ["--check", file], { encoding: "utf8", timeout: 10_000 });
  const first = (check.stderr ?? "").split("\n").find((l) => l.startsWith(`${file}:`));
  const line = first && /^\d+$/.test(first.slice(file.length + 1)) ? first.slice(file.length + 1) : undefined;
  return line ? `line ${line}: ${oneLine(err.message)}` : oneLine(err.message);
}

/** `export default` of a TypeScript file in a CommonJS scope arrives as `{ default: { default: config } }`. */
function unwrap(mod: Record<string, unknown>): unknown {
  let value = mod.default;
  if (value && typeof value === "object" && Object.hasOwn(value, "default") && Object.keys(value).every((k) => k === "default" || k === "__esModule")) {
    value = (value as { default: unknown }).default;
  }
  return value;
}

function fail(file: string, from: string, problem: string, fix: string): never {
  throw new StartupError([`portcullis: config file ${file} (${from}): ${problem}. Fix: ${fix}.`]);
}

export async function loadConfigFile(path: string, from: string): Promise<PortcullisConfig> {
  const file = resolve(path);
  if (!existsSync(file)) fail(file, from, "does not exist", `correct the path in ${from}, relative to ${process.cwd()}`);
  if (!statSync(file).isFile()) fail(file, from, "is not a file", `name a .mjs, .js or .ts module in ${from}`);
  const url = pathToFileURL(file).href;
  const typescript = TS.has(extname(file));
  let mod: Record<string, unknown>;
  try {
    mod = typescript ? await tsImport(url) : ((await import(url)) as Record<string, unknown>);
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const code = (e as NodeJS.ErrnoException).code;
    const where = esbuildLocation(e.message);
    if (e.name === "SyntaxError" || e.name === "TransformError" || where) {
      const detail = where ?? syntaxDetail(file, e);
      const hint = !typescript && /export|import/.test(e.message) ? " (ES module syntax in a .js file outside an ESM package: name it .mjs)" : "";
      fail(file, from, `syntax error at ${detail}${hint}`, "correct the file: a module whose default export is the config object");
    }
    if (code === "ERR_MODULE_NOT_FOUND" || code === "MODULE_NOT_FOUND") {
      fail(file, from, `it imports something that cannot be found (${oneLine(e.message)})`, "install the package it imports or correct the import");
    }
    if (code === "ERR_UNKNOWN_FILE_EXTENSION") fail(file, from, `cannot load a ${extname(file)} file`, "use .mjs, .js or .ts");
    fail(file, from, `failed while loading: ${oneLine(e.message)}`, "correct the code of the file");
  }
  const config = unwrap(mod);
  if (!config || typeof config !== "object" || Array.isArray(config)) {
    fail(file, from, "has no default export object", "end it with `export default { ... }` (or `export default defineConfig({ ... })`)");
  }
  return config as PortcullisConfig;
}
