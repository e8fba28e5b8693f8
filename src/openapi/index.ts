import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { routes } from "../../rest-bridge/routes.ts";
import type { ResolvedConfig } from "../config/index.ts";
import { appRouter } from "../trpc/app-router.ts";
import type { JsonSchema } from "./doc.ts";
import { operationDocs, moduleDocs } from "./modules.ts";
import { openApiPath, operation } from "./operation.ts";
import { errorBody, oauthErrorBody } from "./records.ts";
import { SchemaWriter } from "./schemas.ts";

/** The document's top level; operations and schemas are plain JSON objects. */
export interface OpenApiDocument {
  openapi: "3.1.0";
  info: { title: string; version: string; description: string };
  servers: { url: string }[];
  tags: { name: string; description: string }[];
  /** OpenAPI path (`/reset-password/{token}`) → lower-case method → operation. */
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema & { type: string; name?: string }> };
}

/** This package's version, from the package.json above this file (sources or dist/). */
function packageVersion(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); dir !== dirname(dir); dir = dirname(dir)) {
    const file = join(dir, "package.json");
    if (!existsSync(file)) continue;
    const pkg = JSON.parse(readFileSync(file, "utf8")) as { name?: string; version?: string };
    if (pkg.name === "portcullis" && pkg.version) return pkg.version;
  }
  return "0.0.0";
}

/** `signIn.email` → `signInEmail`; a procedure on two routes gets the method too. */
function operationIds(): Map<(typeof routes)[number], string> {
  const count = new Map<string, number>();
  for (const r of routes) count.set(r.procedure, (count.get(r.procedure) ?? 0) + 1);
  const camel = (s: string) => s.replace(/\.(\w)/g, (_, c: string) => c.toUpperCase());
  const cap = (s: string) => s[0]!.toUpperCase() + s.slice(1).toLowerCase();
  return new Map(routes.map((r) => [r, camel(r.procedure) + (count.get(r.procedure)! > 1 ? cap(r.method) : "")]));
}

/**
 * The OpenAPI 3.1 document of the REST bridge under this configuration (servers, cookie name,
 * rate limits): one operation per route of rest-bridge/routes.ts, built from the procedure's zod
 * input and its module's `*.openapi.ts` doc. Generated on every call; nothing is hand-written.
 */
export function openApiDocument(config: ResolvedConfig): OpenApiDocument {
  const docs = operationDocs();
  const procedures = appRouter._def.procedures as Record<string, unknown>;
  const writer = new SchemaWriter();
  writer.output(errorBody);
  writer.output(oauthErrorBody);
  const ids = operationIds();
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const entry = docs.get(route.procedure);
    const procedure = procedures[route.procedure];
    if (!entry) throw new Error(`${route.method} ${route.path} (${route.procedure}) has no OpenAPI doc: add it to its module's *.openapi.ts`);
    if (!procedure) throw new Error(`${route.method} ${route.path} names no procedure ${route.procedure}`);
    const operationId = ids.get(route)!;
    (paths[openApiPath(route.path)] ??= {})[route.method.toLowerCase()] = operation({ route, procedure, doc: entry.doc, tag: entry.tag, operationId, writer, config });
  }
  const secure = new URL(config.publicUrl).protocol === "https:";
  return {
    openapi: "3.1.0",
    info: {
      title: "Portcullis",
      version: packageVersion(),
      description:
        "Self-hosted authentication: the REST API (wire-compatible with better-auth 1.6's HTTP API and its client SDK). " +
        "JSON in and out; errors are `{ code, message }` with the status of the code (the device-flow token endpoints answer " +
        "RFC 6749 `{ error, error_description }`). State-changing requests that carry the session cookie need an `Origin` of the " +
        "service or a trusted origin. The same operations are typed tRPC procedures under `/api/trpc`.",
    },
    // As the links in mails (src/mail/links.ts): the public URL, then the base path.
    servers: [{ url: `${config.publicUrl.replace(/\/+$/, "")}${config.basePath}` }],
    tags: moduleDocs.map((m) => ({ name: m.tag, description: m.description })),
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(writer.components).sort(([a], [b]) => a.localeCompare(b))),
      securitySchemes: {
        sessionCookie: {
          type: "apiKey",
          in: "cookie",
          // As src/index.ts names it: `__Secure-` when the public URL is https.
          name: `${secure ? "__Secure-" : ""}${config.cookiePrefix}.session_token`,
          description: "The session cookie that sign-in sets (HttpOnly; SameSite=Lax)",
        },
        bearerAuth: { type: "http", scheme: "bearer", description: "The session token (`token` of sign-in, `set-auth-token` header)" },
        apiKeyHeader: {
          type: "apiKey",
          in: "header",
          name: config.apiKey.apiKeyHeaders[0] ?? "x-api-key",
          description: "An API key (`/api-key/create`): acts as its owner, never on account security (docs/machine-access.md)",
        },
      },
    },
  };
}
