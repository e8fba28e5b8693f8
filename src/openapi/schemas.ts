import { z } from "zod";
import type { JsonSchema } from "./doc.ts";
import { components } from "./records.ts";

/**
 * zod 4 → JSON Schema 2020-12 (OpenAPI 3.1's dialect). Records registered in `components` are
 * written once under `components.schemas` and referenced from every schema that uses them.
 */
export class SchemaWriter {
  readonly components: Record<string, JsonSchema> = {};

  /** What a client may send (`io: "input"`: defaults make fields optional, transforms show their input). */
  input(schema: z.ZodType): JsonSchema {
    return this.convert(schema, "input");
  }

  /** What the service answers. */
  output(schema: z.ZodType): JsonSchema {
    return this.convert(schema, "output");
  }

  private convert(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    // `any` for what JSON Schema cannot say (z.custom): docs describe those by hand (doc.ts `input`).
    const json = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any", metadata: components }) as JsonSchema;
    const { $schema: _dialect, $defs, ...rest } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>)) {
      const written = tidy(def) as JsonSchema;
      const known = this.components[id];
      if (known && JSON.stringify(known) !== JSON.stringify(written)) throw new Error(`component ${id} is written two ways`);
      this.components[id] = written;
    }
    return tidy(rest) as JsonSchema;
  }
}

/** Points `#/$defs/X` at `#/components/schemas/X`; drops the long date-time regex zod adds next to `format` (the format says it). */
function tidy(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(tidy);
  if (!value || typeof value !== "object") return value;
  const out: JsonSchema = {};
  for (const [key, v] of Object.entries(value)) {
    if (key === "$ref" && typeof v === "string") out[key] = v.replace(/^#\/\$defs\//, "#/components/schemas/");
    else if (key === "pattern" && (value as JsonSchema).format === "date-time") continue;
    else out[key] = tidy(v);
  }
  return out;
}
