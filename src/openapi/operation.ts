import type { z } from "zod";
import type { Route } from "../../rest-bridge/routes.ts";
import type { ResolvedConfig } from "../config/index.ts";
import type { JsonSchema, OperationDoc } from "./doc.ts";
import { errorResponses, routeErrors } from "./errors.ts";
import type { SchemaWriter } from "./schemas.ts";

/** `:name` segments of a route path, in order. */
export const pathParams = (path: string): string[] => [...path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);

/** `/reset-password/:token` → `/reset-password/{token}`. */
export const openApiPath = (path: string): string => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

/** A procedure's zod input (tRPC keeps the `.input()` parsers in `_def.inputs`); none for input-less procedures. */
export function procedureInput(procedure: unknown): z.ZodType | undefined {
  const inputs = (procedure as { _def: { inputs: unknown[] } })._def.inputs;
  if (inputs.length > 1) throw new Error("a procedure with several .input() parsers cannot be documented");
  return inputs[0] as z.ZodType | undefined;
}

/** The input schema without the fields the path carries. */
function withoutFields(schema: JsonSchema, names: string[]): JsonSchema {
  if (!names.length) return schema;
  const properties = { ...(schema.properties as Record<string, JsonSchema>) };
  for (const n of names) delete properties[n];
  const required = ((schema.required as string[] | undefined) ?? []).filter((r) => !names.includes(r));
  return { ...schema, properties, required };
}

const SESSION = [{ sessionCookie: [] }, { bearerAuth: [] }];

export interface OperationContext {
  route: Route;
  procedure: unknown;
  doc: OperationDoc;
  tag: string;
  operationId: string;
  writer: SchemaWriter;
  config: ResolvedConfig;
}

/** The OpenAPI operation of one route of the table. */
export function operation({ route, procedure, doc, tag, operationId, writer, config }: OperationContext): JsonSchema {
  const input = procedureInput(procedure);
  const params = pathParams(route.path);
  const json = input && route.input !== "none" ? writer.input(input) : undefined;
  if (json && doc.input) doc.input(json);
  const properties = (json?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((json?.required as string[] | undefined) ?? []);

  const parameters: JsonSchema[] = params.map((name) => ({ name, in: "path", required: true, schema: properties[name] ?? { type: "string" } }));
  if (route.input === "query") {
    for (const [name, schema] of Object.entries(properties)) {
      if (!params.includes(name)) parameters.push({ name, in: "query", required: required.has(name), schema });
    }
  }
  let requestBody: JsonSchema | undefined;
  if (json && input && (route.input === "body" || route.input === "body+query")) {
    const schema = withoutFields(json, params);
    requestBody = {
      required: !input.safeParse(undefined).success,
      content: { "application/json": { schema }, ...(route.form ? { "application/x-www-form-urlencoded": { schema } } : {}) },
    };
  }

  const responses: Record<string, JsonSchema> = {};
  if (doc.redirect !== "always") {
    const content = route.html
      ? { "text/html": { schema: { type: "string" } } }
      : route.ndjson && doc.ndjsonItem
        ? { "application/x-ndjson": { schema: writer.output(doc.ndjsonItem) } } // each line one item (rest-bridge/ndjson.ts)
        : { "application/json": { schema: writer.output(doc.output) } };
    responses[String(doc.status ?? 200)] = { description: doc.status === 201 ? "Created" : "OK", content };
  }
  if (doc.redirect || route.errorPage) {
    const why = [
      doc.redirect === "always" ? "The answer: a redirect (tRPC callers get `{ redirect: true, url }`)." : undefined,
      doc.redirect === "with-callback" ? "With a `callbackURL`: a redirect there." : undefined,
      route.errorPage ? `A browser navigation (Accept prefers text/html) that fails goes to \`${config.basePath}/error?error=CODE\`.` : undefined,
    ];
    responses["302"] = { description: why.filter(Boolean).join(" "), headers: { Location: { schema: { type: "string" } } } };
  }
  Object.assign(responses, errorResponses(routeErrors(route, doc, json !== undefined, config)));

  // A key in the API-key header stands for a session where a key may act (docs/machine-access.md), not where it is refused (own-session).
  const byKey = config.apiKey.enabled && config.apiKey.enableSessionForAPIKeys ? [{ apiKeyHeader: [] }] : [];
  const security =
    doc.access === "session" ? [...SESSION, ...byKey] : doc.access === "own-session" ? SESSION : doc.access === "optional" ? [{}, ...SESSION, ...byKey] : undefined;
  const notes = [
    doc.description,
    doc.access === "own-session" ? "Needs the user's own session: an impersonation session gets 403 IMPERSONATION_NOT_ALLOWED." : undefined,
    doc.access === "sign-in" ? "Needs no session; sent from an impersonation session it gets 403 IMPERSONATION_NOT_ALLOWED." : undefined,
    route.login ? "Starts a sign-in: refused (403 INVALID_ORIGIN) from a page of a foreign origin." : undefined,
    route.input === "body+query" ? "The query's fields win over the body's." : undefined,
  ].filter(Boolean);
  return {
    operationId,
    tags: [tag],
    summary: doc.summary,
    ...(notes.length ? { description: notes.join("\n\n") } : {}),
    ...(parameters.length ? { parameters } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    ...(security ? { security } : {}),
  };
}
