/**
 * `npm run docs`: regenerates the generated parts of docs/ (the config keys and the error codes)
 * from the sources. `--check` writes nothing and exits 1 when a generated file is stale (the
 * docs test does the same check in `npm test`).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { configKeys, table } from "./docs/config-doc.ts";
import { errorRows, errorsTable } from "./docs/errors-doc.ts";
import { routesTable } from "./docs/routes-doc.ts";

const root = join(import.meta.dirname, "..");
const BEGIN = "<!-- BEGIN GENERATED (npm run docs): edit the sources, not this block -->";
const END = "<!-- END GENERATED -->";

/** The generated block of each file, from the sources. */
export function generatedBlocks(): Record<string, string> {
  const { keys, providers } = configKeys();
  const config = [
    "## Every key",
    "",
    table(keys.filter((k) => k.key !== "providers")),
    "",
    "## Providers",
    "",
    "`providers` maps a name of your choice (the `{provider}` segment of `/sign-in/social` and of",
    "the callback URL `{publicUrl}{basePath}/callback/{name}`) to one of these types. See",
    "[providers.md](providers.md) for examples.",
    ...Object.entries(providers).flatMap(([type, rows]) => ["", `### \`type: "${type}"\``, "", table(rows)]),
  ].join("\n");
  const errors = errorsTable(errorRows());
  return { "docs/configuration.md": config, "docs/errors.md": errors, "docs/http-api.md": routesTable() };
}

/** The file with its generated block replaced. */
export function withBlock(text: string, block: string, file: string): string {
  const start = text.indexOf(BEGIN);
  const end = text.indexOf(END);
  if (start < 0 || end < start) throw new Error(`${file} has no ${BEGIN} … ${END} block`);
  return `${text.slice(0, start + BEGIN.length)}\n\n${block}\n\n${text.slice(end)}`;
}

/** Files whose generated block differs from the sources. */
export function staleDocs(): string[] {
  return Object.entries(generatedBlocks())
    .filter(([file, block]) => {
      const text = readFileSync(join(root, file), "utf8");
      return withBlock(text, block, file) !== text;
    })
    .map(([file]) => file);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  if (process.argv.includes("--check")) {
    const stale = staleDocs();
    if (stale.length) {
      console.error(`stale: ${stale.join(", ")} (run npm run docs)`);
      process.exit(1);
    }
  } else {
    for (const [file, block] of Object.entries(generatedBlocks())) {
      const path = join(root, file);
      const text = readFileSync(path, "utf8");
      const next = withBlock(text, block, file);
      if (next !== text) writeFileSync(path, next);
      console.log(next === text ? `${file}: up to date` : `${file}: written`);
    }
  }
}
