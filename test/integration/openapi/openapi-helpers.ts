import { dereference } from "@readme/openapi-parser";
import { Ajv2020 } from "ajv/dist/2020.js";
import formats from "ajv-formats";
import type { OpenApiDocument } from "../../../src/openapi/index.ts";

/** A JSON Schema or OpenAPI object, read loosely. */
export type Json = Record<string, any>;

/** The document with every `$ref` replaced by its target (ajv and the example builder then need no resolver). */
export async function dereferenced(doc: OpenApiDocument): Promise<Json> {
  return (await dereference(structuredClone(doc) as never)) as Json;
}

/** JSON Schema 2020-12 (OpenAPI 3.1's dialect) with formats checked. */
export function schemaValidator() {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  formats.default(ajv); // a CommonJS module: its default export is `.default` here
  return (schema: Json, value: unknown): string | null => {
    const validate = ajv.compile(schema);
    return validate(value) ? null : ajv.errorsText(validate.errors, { separator: "; " });
  };
}

/**
 * A minimal valid value for a schema: required properties only (with `anyOf` branches of
 * `required` lists, the first), the first enum value or union branch, the smallest string or
 * number the constraints allow. `known` gives values by property name (an existing user's id,
 * the password it signed up with): the shape still comes from the document.
 */
export function exampleOf(schema: Json, known: Record<string, unknown>, name?: string): unknown {
  if (name !== undefined && Object.hasOwn(known, name)) return known[name];
  if (schema.const !== undefined) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const isObject = schema.type === "object" || schema.properties !== undefined;
  if (!isObject && Array.isArray(schema.anyOf ?? schema.oneOf)) return exampleOf((schema.anyOf ?? schema.oneOf)[0], known);
  if (Array.isArray(schema.allOf)) return exampleOf(Object.assign({}, ...schema.allOf, { allOf: undefined }), known, name);
  const type = Array.isArray(schema.type) ? schema.type.find((t: string) => t !== "null") : schema.type;
  if (isObject) {
    const required = new Set<string>(schema.required ?? []);
    const branch = (schema.anyOf ?? schema.oneOf)?.[0];
    for (const r of branch?.required ?? []) required.add(r);
    const props: Json = schema.properties ?? {};
    return Object.fromEntries([...required].map((key) => [key, exampleOf(props[key] ?? {}, known, key)]));
  }
  switch (type) {
    case "array":
      return schema.minItems > 0 ? [exampleOf(schema.items ?? {}, known)] : [];
    case "number":
    case "integer":
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1);
    case "boolean":
      return true;
    case "string":
      return exampleString(schema);
    default:
      return "example";
  }
}

function exampleString(schema: Json): string {
  if (schema.format === "email") return "someone@example.test";
  if (schema.format === "date-time") return new Date().toISOString();
  if (schema.format === "uri" || schema.format === "url") return "https://example.test/";
  const min = schema.minLength ?? 1;
  const candidates = ["1", "example", "a".repeat(Math.max(min, 1))];
  const pattern = schema.pattern ? new RegExp(schema.pattern, "u") : null;
  return candidates.find((c) => c.length >= min && (!pattern || pattern.test(c))) ?? "example".padEnd(min, "x");
}
