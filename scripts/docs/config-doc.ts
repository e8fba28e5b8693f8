/**
 * docs/configuration.md, generated: every key of the zod config schema (src/config/schema.ts)
 * with its type, default and environment variable, described by the JSDoc comment written on the
 * key in the schema's source. One source: a key gains its line in the doc by gaining a comment.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import ts from "typescript";
import { z } from "zod";
import { configSchema } from "../../src/config/schema.ts";
import { providerConfigSchema } from "../../src/social-providers/config.ts";

type Json = Record<string, any>;

export interface ConfigKey {
  key: string;
  type: string;
  default: string;
  env: string;
  description: string;
}

/** Where an environment variable sets a key (src/config/index.ts applyEnv). */
export const ENV_BY_KEY: Record<string, string> = {
  port: "PORT",
  host: "HOST",
  databaseUrl: "DATABASE_URL",
  publicUrl: "PUBLIC_URL",
  secret: "AUTH_SECRET",
  secrets: "AUTH_SECRETS (comma-separated)",
  "email.smtpUrl": "SMTP_URL",
  "rateLimit.redisUrl": "REDIS_URL",
  "metrics.token": "METRICS_TOKEN",
  logLevel: "LOG_LEVEL",
};

/** JSDoc of every property in a source file, keyed by its path of enclosing property names. */
export function jsdocByPath(file: string): Map<string, string> {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const out = new Map<string, string>();
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node)) {
      const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
      const text = docs.map((d) => ts.getTextOfJSDocComment(d.comment) ?? "").join(" ").replace(/\s+/g, " ").trim();
      if (text && ts.isIdentifier(node.name)) out.set(pathOf(node), text);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return out;
}

/**
 * `a.b.c` for property c inside b inside a (from the `configSchema` root); a provider variant's
 * properties under `variant:<type>`; properties of another const under `const:<name>`.
 */
function pathOf(node: ts.PropertyAssignment | ts.ShorthandPropertyAssignment): string {
  const names = [(node.name as ts.Identifier).text];
  for (let at: ts.Node = node.parent; at; at = at.parent) {
    if (ts.isPropertyAssignment(at) && ts.isIdentifier(at.name)) names.unshift(at.name.text);
    const variant = variantOf(at);
    if (variant) {
      names.unshift(variant);
      break;
    }
    if (ts.isVariableDeclaration(at) && ts.isIdentifier(at.name)) {
      if (at.name.text !== "configSchema") names.unshift(`const:${at.name.text}`);
      break;
    }
  }
  return names.join(".");
}

/** `google` for an object literal holding `type: z.literal("google")`. */
function variantOf(obj: ts.Node): string | undefined {
  if (!ts.isObjectLiteralExpression(obj)) return undefined;
  for (const p of obj.properties) {
    if (ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === "type" && ts.isCallExpression(p.initializer)) {
      const arg = p.initializer.arguments[0];
      if (arg && ts.isStringLiteral(arg)) return `variant:${arg.text}`;
    }
  }
  return undefined;
}

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

function typeOf(s: Json): string {
  if (s.anyOf ?? s.oneOf) return (s.anyOf ?? s.oneOf).map(typeOf).join(" \\| ");
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return s.enum.map((v: unknown) => JSON.stringify(v)).join(" \\| ");
  if (s.type === "array") return `${typeOf(s.items ?? {})}[]`;
  if (s.type === "object") return s.additionalProperties && typeof s.additionalProperties === "object" && !s.properties ? `{ [name]: ${typeOf(s.additionalProperties)} }` : "object";
  if (s.type === "null") return "null";
  if (Array.isArray(s.type)) return s.type.join(" \\| ");
  if (!s.type) return "function / object";
  const range: string[] = [];
  if (s.minimum !== undefined && s.minimum !== -MAX_SAFE) range.push(`≥ ${s.minimum}`);
  if (s.exclusiveMinimum !== undefined) range.push(`> ${s.exclusiveMinimum}`);
  if (s.maximum !== undefined && s.maximum !== MAX_SAFE) range.push(`≤ ${s.maximum}`);
  if (s.minLength !== undefined) range.push(`${s.minLength}+ chars`);
  return range.length ? `${s.type} (${range.join(", ")})` : s.type;
}

function defaultOf(s: Json): string {
  if (s.default === undefined) return "";
  if (typeof s.default === "object" && s.default !== null && !Array.isArray(s.default) && !Object.keys(s.default).length) return "";
  return `\`${JSON.stringify(s.default)}\``;
}

const isBranch = (s: Json) => s.type === "object" && s.properties && Object.keys(s.properties).length > 0;

function flatten(schema: Json, prefix: string, describe: (key: string) => string, out: ConfigKey[]) {
  for (const [name, sub] of Object.entries<Json>(schema.properties ?? {})) {
    const key = prefix ? `${prefix}.${name}` : name;
    if (isBranch(sub)) {
      flatten(sub, key, describe, out);
      continue;
    }
    out.push({ key, type: typeOf(sub), default: defaultOf(sub), env: ENV_BY_KEY[key] ?? "", description: describe(key) });
  }
}

/** What each provider `type` is (its variant's first line in the doc). */
const TYPE_DOCS: Record<string, string> = {
  oauth2: "Any OAuth 2.0 / OpenID Connect provider: every endpoint and `mapUserInfo` are required.",
  google: "Google (OpenID Connect): client id and secret suffice.",
  github: "GitHub (OAuth app): client id and secret suffice; only verified emails are used.",
  discord: "Discord: client id and secret suffice.",
};

const root = join(import.meta.dirname, "..", "..");

/** Every key of the config, `providers` per provider type (`providers.<name>.*`). */
/**
 * The JSDoc of a config whose sections live in files of their own (a family's `*.config.ts`):
 * `key: someConfig` in src/config/schema.ts, `someConfig` imported from its file, whose
 * properties document `key.<property>`.
 */
function configDocs(schemaFile: string): Map<string, string> {
  const docs = jsdocByPath(schemaFile);
  const source = ts.createSourceFile(schemaFile, readFileSync(schemaFile, "utf8"), ts.ScriptTarget.Latest, true);
  const fileOf = new Map<string, string>();
  for (const stmt of source.statements) {
    if (!ts.isImportDeclaration(stmt) || !ts.isStringLiteral(stmt.moduleSpecifier)) continue;
    const named = stmt.importClause?.namedBindings;
    if (named && ts.isNamedImports(named)) for (const el of named.elements) fileOf.set(el.name.text, join(dirname(schemaFile), stmt.moduleSpecifier.text));
  }
  const visit = (node: ts.Node) => {
    if (ts.isPropertyAssignment(node) && ts.isIdentifier(node.name) && ts.isIdentifier(node.initializer) && fileOf.has(node.initializer.text)) {
      const section = node.name.text;
      const prefix = `const:${node.initializer.text}.`;
      for (const [path, text] of jsdocByPath(fileOf.get(node.initializer.text)!)) {
        if (path.startsWith(prefix)) docs.set(`${section}.${path.slice(prefix.length)}`, text);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return docs;
}

export function configKeys(): { keys: ConfigKey[]; providers: Record<string, ConfigKey[]> } {
  const docs = configDocs(join(root, "src/config/schema.ts"));
  const providerDocs = jsdocByPath(join(root, "src/social-providers/config.ts"));
  const json = z.toJSONSchema(configSchema, { io: "input", unrepresentable: "any" }) as Json;
  const keys: ConfigKey[] = [];
  const describe = (key: string) =>
    docs.get(key) ??
    (key.startsWith("http.") ? providerDocs.get(`const:httpConfigSchema.${key.slice(5)}`) : undefined) ??
    // `x.enabled` of a section documented as a whole
    (key.endsWith(".enabled") ? docs.get(key.slice(0, -".enabled".length)) : undefined) ??
    "";
  flatten(json, "", describe, keys);
  const providers: Record<string, ConfigKey[]> = {};
  const union = z.toJSONSchema(providerConfigSchema, { io: "input", unrepresentable: "any" }) as Json;
  for (const variant of union.oneOf ?? union.anyOf ?? []) {
    const type = variant.properties.type.const as string;
    const rows: ConfigKey[] = [];
    const describe = (key: string) =>
      (key === "type" ? TYPE_DOCS[type] : undefined) ??
      providerDocs.get(`variant:${type}.${key}`) ?? providerDocs.get(`const:builtIn.${key}`) ?? providerDocs.get(`const:issuerCheck.${key}`) ?? "";
    flatten(variant, "", describe, rows);
    providers[type] = rows.map((r) => ({ ...r, key: `providers.<name>.${r.key}`, env: r.key === "clientId" || r.key === "clientSecret" ? (type === "oauth2" ? "" : `${type.toUpperCase()}_${r.key === "clientId" ? "CLIENT_ID" : "CLIENT_SECRET"}`) : "" }));
  }
  return { keys, providers };
}

/** Source comments may cite the team's wire contract (docs/wire-contract.md §n), which is not part of the docs. */
export const publicText = (s: string) => s.replace(/\s*\(CONTRACT\.md[^)]*\)/g, "").replace(/,?\s*CONTRACT\.md §\d+/g, "");
const cell = (s: string) => publicText(s).replace(/\|/g, "\\|").replace(/\n/g, " ");

export function table(rows: ConfigKey[]): string {
  const lines = ["| key | type | default | env | description |", "|---|---|---|---|---|"];
  for (const r of rows) lines.push(`| \`${r.key}\` | ${r.type} | ${r.default} | ${r.env ? `\`${r.env}\`` : ""} | ${cell(r.description)} |`);
  return lines.join("\n");
}
