/**
 * docs/errors.md, generated from the one error table (src/errors.ts): every code, its status,
 * its message, and the group comment it is filed under in the source.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { ERRORS } from "../../src/errors.ts";
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

/** The table's entries in source order, with the `// group` comment above each and its own JSDoc. */
export function errorRows(): ErrorRow[] {
  const file = join(root, "src/errors.ts");
  const text = readFileSync(file, "utf8");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const rows: ErrorRow[] = [];
  let group = "";
  const visit = (node: ts.Node) => {
    if (ts.isVariableDeclaration(node) && ts.isIdentifier(node.name) && node.name.text === "ERRORS") {
      let literal: ts.Node | undefined = node.initializer;
      while (literal && !ts.isObjectLiteralExpression(literal)) literal = literal.getChildren().find((c) => ts.isObjectLiteralExpression(c) || ts.isAsExpression(c) || ts.isSatisfiesExpression(c));
      if (!literal || !ts.isObjectLiteralExpression(literal)) throw new Error("ERRORS is not an object literal");
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
        rows.push({ code, wireCode: entry[2] ?? code, status: entry[0], message: entry[1], group, note });
      }
      return;
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  if (rows.length !== Object.keys(ERRORS).length) throw new Error(`read ${rows.length} of ${Object.keys(ERRORS).length} error codes from src/errors.ts`);
  return rows;
}

const cell = (s: string) => publicText(s).replace(/\|/g, "\\|");

export function errorsTable(rows: ErrorRow[]): string {
  const lines = ["| code | status | message | where it comes from |", "|---|---|---|---|"];
  for (const r of rows) {
    const code = r.wireCode === r.code ? `\`${r.code}\`` : `\`${r.wireCode}\` (internally \`${r.code}\`)`;
    // The group comment starts with the status ("400, admin (...)"): keep what follows it.
    const where = [r.group.replace(/^[\d, ]+:?\s*/, ""), r.note].filter(Boolean).join(". ");
    lines.push(`| ${code} | ${r.status} | ${cell(r.message)} | ${cell(where)} |`);
  }
  return lines.join("\n");
}
