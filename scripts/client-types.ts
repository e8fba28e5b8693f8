/**
 * Writes packages/client/src/app-router.d.ts: the service's `AppRouter` as self-contained
 * declarations (docs/getting-started.md "The light client"). Each procedure's input and output
 * type is printed structurally (objects, unions, literals...), so the file imports nothing of the
 * server, nothing of zod or MikroORM: only `@trpc/server`'s types, which `@trpc/client` needs
 * anyway. `npx tsx scripts/client-types.ts` rewrites it; `--check` fails when it is stale
 * (test/process/client-package.test.ts runs that).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
export const GENERATED = join(ROOT, "packages/client/src/app-router.d.ts");

function printer(checker: ts.TypeChecker) {
  const quote = (name: string) => (/^[A-Za-z_$][\w$]*$/.test(name) ? name : JSON.stringify(name));
  function print(type: ts.Type, depth: number): string {
    if (depth > 40) return "unknown";
    const f = type.flags;
    if (f & ts.TypeFlags.Any) return "any";
    if (f & ts.TypeFlags.Unknown) return "unknown";
    if (f & ts.TypeFlags.Never) return "never";
    if (f & ts.TypeFlags.StringLiteral) return JSON.stringify((type as ts.StringLiteralType).value);
    if (f & ts.TypeFlags.NumberLiteral) return String((type as ts.NumberLiteralType).value);
    if (f & ts.TypeFlags.BooleanLiteral) return checker.typeToString(type);
    if (f & ts.TypeFlags.String) return "string";
    if (f & ts.TypeFlags.Number) return "number";
    if (f & ts.TypeFlags.Boolean) return "boolean";
    if (f & ts.TypeFlags.BigInt) return "bigint";
    if (f & ts.TypeFlags.Null) return "null";
    if (f & ts.TypeFlags.Undefined) return "undefined";
    if (f & ts.TypeFlags.Void) return "void";
    if (f & ts.TypeFlags.ESSymbolLike) return "symbol";
    if (type.isUnion()) {
      // `true | false` back to boolean, for readable declarations
      const parts = type.types.map((t) => print(t, depth + 1));
      const set = new Set(parts);
      if (set.has("true") && set.has("false")) {
        set.delete("true");
        set.delete("false");
        set.add("boolean");
      }
      return [...set].map((p) => (p.includes("=>") ? `(${p})` : p)).join(" | ");
    }
    if (type.isIntersection()) return type.types.map((t) => `(${print(t, depth + 1)})`).join(" & ");
    if (f & ts.TypeFlags.Object) {
      const symbol = type.getSymbol();
      if (symbol?.getName() === "Date") return "Date";
      if (checker.isArrayType(type)) {
        const [element] = checker.getTypeArguments(type as ts.TypeReference);
        const readonly = (type as ts.TypeReference).target.getSymbol()?.getName() === "ReadonlyArray";
        return `${readonly ? "ReadonlyArray" : "Array"}<${print(element!, depth + 1)}>`;
      }
      if (checker.isTupleType(type)) {
        return `[${checker.getTypeArguments(type as ts.TypeReference).map((t) => print(t, depth + 1)).join(", ")}]`;
      }
      if (type.getCallSignatures().length > 0) return "((...args: any[]) => unknown)";
      const members: string[] = [];
      for (const info of checker.getIndexInfosOfType(type)) {
        members.push(`${info.isReadonly ? "readonly " : ""}[key: ${print(info.keyType, depth + 1)}]: ${print(info.type, depth + 1)}`);
      }
      for (const prop of checker.getPropertiesOfType(type)) {
        const optional = (prop.flags & ts.SymbolFlags.Optional) !== 0;
        const decl = prop.valueDeclaration ?? prop.declarations?.[0];
        const readonly = decl ? (ts.getCombinedModifierFlags(decl as ts.Declaration) & ts.ModifierFlags.Readonly) !== 0 : false;
        members.push(`${readonly ? "readonly " : ""}${quote(prop.getName())}${optional ? "?" : ""}: ${print(checker.getTypeOfSymbol(prop), depth + 1)}`);
      }
      return members.length ? `{ ${members.join("; ")} }` : "{}";
    }
    return "unknown";
  }
  return (type: ts.Type) => print(type, 0);
}

export function generateAppRouterDeclarations(): string {
  const configFile = ts.getParsedCommandLineOfConfigFile(join(ROOT, "tsconfig.json"), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} })!;
  const entry = join(ROOT, "src/client/router-types.ts");
  const program = ts.createProgram([entry], { ...configFile.options, noEmit: true });
  const checker = program.getTypeChecker();
  const source = program.getSourceFile(entry)!;
  const exported = checker.getExportsOfModule(checker.getSymbolAtLocation(source)!);
  const typeOf = (name: string) => checker.getDeclaredTypeOfSymbol(exported.find((s) => s.getName() === name)!);
  const print = printer(checker);
  const prop = (type: ts.Type, name: string) => {
    const p = type.getProperty(name);
    return p ? checker.getTypeOfSymbol(p) : undefined;
  };

  function record(type: ts.Type, indent: string): string {
    const lines: string[] = [];
    for (const member of checker.getPropertiesOfType(type)) {
      const value = checker.getTypeOfSymbol(member);
      const def = prop(value, "_def");
      const name = /^[A-Za-z_$][\w$]*$/.test(member.getName()) ? member.getName() : JSON.stringify(member.getName());
      if (def && prop(def, "procedure")) {
        const kind = checker.typeToString(prop(def, "type")!).replace(/"/g, "");
        const types = prop(def, "$types")!;
        const builder = kind === "query" ? "TRPCQueryProcedure" : kind === "mutation" ? "TRPCMutationProcedure" : "TRPCSubscriptionProcedure";
        lines.push(`${indent}${name}: ${builder}<{ input: ${print(prop(types, "input")!)}; output: ${print(prop(types, "output")!)}; meta: object }>;`);
      } else {
        const inner = def ? prop(def, "record")! : value;
        lines.push(`${indent}${name}: {\n${record(inner, `${indent}  `)}\n${indent}};`);
      }
    }
    return lines.join("\n");
  }

  const router = typeOf("AppRouter");
  const def = prop(router, "_def")!;
  const rootTypes = prop(prop(def, "_config")!, "$types")!;
  const errorShape = print(prop(rootTypes, "errorShape")!);
  return `// Generated by scripts/client-types.ts from the service's router: do not edit.
// Self-contained: every procedure's input and output printed as plain types; only @trpc/server's types are imported.
import type { TRPCBuiltRouter, TRPCMutationProcedure, TRPCQueryProcedure, TRPCSubscriptionProcedure } from "@trpc/server";

/** The contract's error codes (docs/errors.md), found in \`error.data.authCode\`. */
export type AuthErrorCode = ${print(typeOf("ErrorCode"))};

export type AppRouterErrorShape = ${errorShape};

export type AppRouter = TRPCBuiltRouter<
  { ctx: object; meta: object; errorShape: AppRouterErrorShape; transformer: false },
  {
${record(prop(def, "record")!, "    ")}
  }
>;
`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  const text = generateAppRouterDeclarations();
  if (process.argv.includes("--check")) {
    const current = readFileSync(GENERATED, "utf8");
    if (current !== text) {
      console.error(`${GENERATED} is stale: run npx tsx scripts/client-types.ts`);
      process.exit(1);
    }
  } else writeFileSync(GENERATED, text);
}
