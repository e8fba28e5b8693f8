import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { afterAll, describe, expect, it } from "vitest";

/**
 * Docs that compile: every TypeScript block (```ts or ```typescript) of README.md and docs/*.md
 * is type-checked as a module of its own, strict, `module: nodenext`, against the package as it
 * ships (`portcullis`, `portcullis/client`... resolve to dist/'s declarations through the
 * package's exports, as in an app that installed it). A block that is a fragment on purpose says
 * so: a ```ts fragment fence, or an `<!-- fragment -->` line (with an optional note) right above
 * it. A failure names the file, the block's line and the error.
 */

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");
const markdown = ["README.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => `docs/${f}`)];

interface Block {
  file: string;
  /** 1-based line of the opening fence. */
  line: number;
  code: string;
  fragment: boolean;
}

export function typeScriptBlocks(file: string, text: string): Block[] {
  const lines = text.split("\n");
  const blocks: Block[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```(ts|typescript)(\s+fragment)?\s*$/.exec(lines[i]!);
    if (!open) {
      if (/^```/.test(lines[i]!)) {
        // another language's block: skip to its end
        for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++);
      }
      continue;
    }
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    const marked = start > 0 && /^<!--\s*fragment\b[\s\S]*-->\s*$/.test(lines[start - 1]!);
    blocks.push({ file, line: start + 1, code: body.join("\n"), fragment: Boolean(open[2]) || marked });
  }
  return blocks;
}

const blocks = markdown.flatMap((file) => typeScriptBlocks(file, readFileSync(join(ROOT, file), "utf8")));
// Inside the checkout, so `portcullis` resolves to this package by its own name (its exports, dist/'s .d.ts) and other packages from its node_modules.
const dir = mkdtempSync(join(ROOT, ".docs-typecheck-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("TypeScript in README.md and docs/", () => {
  it("finds the blocks, and the fence or comment marking fragments", () => {
    expect(blocks.length).toBeGreaterThan(5);
    const sample = typeScriptBlocks("x.md", "<!-- fragment -->\n```ts\na\n```\n```ts fragment\nb\n```\n```js\nc\n```\n```ts\nd\n```\n");
    expect(sample.map((b) => [b.code, b.fragment])).toEqual([["a", true], ["b", true], ["d", false]]);
  });

  it("every block that is not a fragment type-checks on its own (strict, nodenext, against the shipped package)", () => {
    const checked = blocks.filter((b) => !b.fragment);
    const files = checked.map((b, i) => {
      const name = join(dir, `${b.file.replace(/[/.]/g, "_")}_line${b.line}_${i}.ts`);
      // Each block its own module (a block without import or export would share the global scope).
      writeFileSync(name, `${b.code}\nexport {};\n`);
      return { name, block: b };
    });
    mkdirSync(dir, { recursive: true });
    const program = ts.createProgram(
      files.map((f) => f.name),
      {
        strict: true,
        noEmit: true,
        module: ts.ModuleKind.NodeNext,
        moduleResolution: ts.ModuleResolutionKind.NodeNext,
        target: ts.ScriptTarget.ES2022,
        skipLibCheck: true,
        types: ["node"],
        typeRoots: [join(ROOT, "node_modules/@types")],
      },
    );
    const failures: string[] = [];
    for (const { name, block } of files) {
      const source = program.getSourceFile(name)!;
      for (const d of [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)]) {
        const at = d.start !== undefined ? source.getLineAndCharacterOfPosition(d.start).line : 0;
        failures.push(`${block.file}:${block.line + 1 + at} (the block at line ${block.line}): TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
      }
    }
    console.log(`[docs-typecheck] ${checked.length} blocks type-checked, ${blocks.length - checked.length} fragments: ${relative(ROOT, dir)}`);
    expect(failures, `Mark a deliberate fragment with \`\`\`ts fragment or <!-- fragment --> above it; otherwise fix the block.\n${failures.join("\n")}`).toEqual([]);
  }, 120_000);
});
