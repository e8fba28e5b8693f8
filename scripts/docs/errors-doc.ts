/**
 * docs/errors.md, generated from the error tables src/errors.ts composes (the kernel's and each
 * family's): every code, its status, its message, its family and the group comment it is filed under.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ERROR_TABLES, ERRORS } from "../../src/errors.ts";
import { publicText } from "./config-doc.ts";

export interface ErrorRow {
  code: string;
  wireCode: string;
  status: number;
  message: string;
  group: string;
  note: string;
}

const root = join(import.meta.dirname, "..", "..");

/** Where each table of src/errors.ts ERROR_TABLES lives (the kernel's, then each family's). */
function tableFile(name: string): string {
  return name === "kernel" ? "src/core/errors.ts" : `src/modules/${name}/${name}.errors.ts`;
}

/** Every table's entries in source order, with the `// group` comment above each, its own JSDoc, and the table it is in. */
export function errorRows(): ErrorRow[] {
  const rows: ErrorRow[] = [];
  for (const name of Object.keys(ERROR_TABLES)) {
    const file = join(root, tableFile(name));
    const text = readFileSync(file, "utf8");
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    let group = "";
    const visit = (node: ts.Node) => {
      if (ts.isVariableDeclaration(node) && node.initializer) {
        // `{ ... } as const satisfies ErrorTable`
        let literal: ts.Expression = node.initializer;
        while (ts.isSatisfiesExpression(literal) || ts.isAsExpression(literal)) literal = literal.expression;
        if (!ts.isObjectLiteralExpression(literal)) throw new Error(`${file}: the table is not an object literal`);
        for (const prop of literal.properties) {
          if (!ts.isPropertyAssignment(prop) || !ts.isIdentifier(prop.name)) continue;
          for (const range of ts.getLeadingCommentRanges(text, prop.getFullStart()) ?? []) {
            const comment = text.slice(range.pos, range.end);
            if (comment.startsWith("//")) group = comment.slice(2).trim();
          }
          const note = ts
            .getJSDocCommentsAndTags(prop)
            .filter(ts.isJSDoc)
            .map((d) => ts.getTextOfJSDocComment(d.comment) ?? "")
            .join(" ")
            .replace(/\s+/g, " ")
            .trim();
          const code = prop.name.text as keyof typeof ERRORS;
          const entry: readonly [number, string, string?] = ERRORS[code];
          rows.push({ code, wireCode: entry[2] ?? code, status: entry[0], message: entry[1], group: [name === "kernel" ? "" : name, group.replace(/^[\d, ]+:?\s*/, "")].filter(Boolean).join(": "), note });
        }
        return;
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  if (rows.length !== Object.keys(ERRORS).length) throw new Error(`read ${rows.length} of ${Object.keys(ERRORS).length} error codes from the error tables`);
  return rows;
}

const cell = (s: string) => publicText(s).replace(/\|/g, "\\|");

export function errorsTable(rows: ErrorRow[]): string {
  const lines = ["| code | status | message | family, where it comes from |", "|---|---|---|---|"];
  for (const r of rows) {
    const code = r.wireCode === r.code ? `\`${r.code}\`` : `\`${r.wireCode}\` (internally \`${r.code}\`)`;
    const where = [r.group, r.note].filter(Boolean).join(". ");
    lines.push(`| ${code} | ${r.status} | ${cell(r.message)} | ${cell(where)} |`);
  }
  return lines.join("\n");
}
