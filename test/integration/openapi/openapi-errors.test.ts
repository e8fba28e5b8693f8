import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { compileErrors, validate } from "@readme/openapi-parser";
import { describe, expect, it } from "vitest";
import { resolveConfig } from "../../../src/config/index.ts";
import { ERRORS, type ErrorCode } from "../../../src/errors.ts";
import { openApiDocument, type OpenApiDocument } from "../../../src/openapi/index.ts";
import { routes } from "../../../rest-bridge/routes.ts";
import { appRouter } from "../../../src/trpc/app-router.ts";
import type { ProcedureMeta } from "../../../src/trpc/init.ts";
import { moduleDocs, operationDocs } from "../../../src/openapi/modules.ts";

/**
 * The error side of the generated document (no server needed): every code of the one error
 * table is documented where it can be answered, each module's refusals are on its own routes,
 * and the document follows the config (servers, cookie, rate limits).
 */

const config = resolveConfig({ secret: "openapi-test-secret-openapi-test-secret" });
const doc = openApiDocument(config);
type Json = Record<string, any>;

/**
 * `status CODE` pairs an operation documents (its `x-error-codes`: the contract codes, also those
 * the RFC 6749 shape answers under an RFC name), checked against the schemas' enums, plus
 * `status oauth:error` for the RFC names.
 */
function answered(op: Json): Set<string> {
  const pairs = new Set<string>();
  for (const [status, response] of Object.entries(op.responses as Record<string, Json>)) {
    if (!/^[45]/.test(status)) continue;
    const schema = response.content?.["application/json"]?.schema;
    const shapes: Json[] = schema?.anyOf ?? [schema];
    const enums = new Set<string>(shapes.flatMap((s) => s.properties?.code?.enum ?? []));
    for (const code of response["x-error-codes"] as string[]) pairs.add(`${status} ${code}`);
    for (const code of enums) expect(response["x-error-codes"], `${op.operationId} ${status}`).toContain(code);
    for (const error of shapes.flatMap((s) => s.properties?.error?.enum ?? [])) pairs.add(`${status} oauth:${error}`);
  }
  return pairs;
}

const operations = (d: OpenApiDocument) => Object.values(d.paths).flatMap((ops) => Object.values(ops));
const allAnswered = new Set(operations(doc).flatMap((op) => [...answered(op)]));
const wire = (code: ErrorCode) => `${ERRORS[code][0]} ${(ERRORS[code] as readonly unknown[])[2] ?? code}`;

/** Answered by node:http before any route runs (rest-bridge/server.ts clientError): no operation can list them. */
const BEFORE_ROUTING: ErrorCode[] = ["BAD_REQUEST", "REQUEST_TIMEOUT", "REQUEST_HEADER_FIELDS_TOO_LARGE"];

describe("errors in the OpenAPI document", () => {
  it("documents every code of src/errors.ts on some route, with its status", () => {
    const missing = (Object.keys(ERRORS) as ErrorCode[])
      .filter((code) => !BEFORE_ROUTING.includes(code))
      .filter((code) => !allAnswered.has(wire(code)));
    expect(missing).toEqual([]);
    for (const code of BEFORE_ROUTING) expect(allAnswered.has(wire(code)), code).toBe(false);
  });

  it("documents each module's refusals on that module's routes (every error code its source names)", () => {
    const modulesDir = join(import.meta.dirname, "../../../src/modules");
    const byTag = new Map<string, Set<string>>();
    for (const route of routes) {
      const mod = moduleDocs.find((m) => Object.hasOwn(m.operations, route.procedure))!;
      const op = (doc.paths as Json)[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase()];
      const set = byTag.get(mod.tag) ?? new Set();
      for (const pair of answered(op)) set.add(pair.replace(/^\d+ /, ""));
      byTag.set(mod.tag, set);
    }
    const undocumented: string[] = [];
    for (const folder of readdirSync(modulesDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name)) {
      const files = readdirSync(join(modulesDir, folder)).filter((f) => f.endsWith(".ts") && !f.endsWith(".test.ts") && !f.endsWith(".openapi.ts"));
      const docFile = readdirSync(join(modulesDir, folder)).find((f) => f.endsWith(".openapi.ts"));
      if (!docFile) continue; // no routes of its own (rate-limit)
      const tags = moduleDocs.filter((m) => readFileSync(join(modulesDir, folder, docFile), "utf8").includes(`tag: "${m.tag}"`)).map((m) => m.tag);
      const documentedHere = new Set(tags.flatMap((t) => [...(byTag.get(t) ?? [])]));
      for (const file of files) {
        const source = readFileSync(join(modulesDir, folder, file), "utf8");
        for (const [, code] of source.matchAll(/"([A-Z][A-Z0-9_]+)"/g)) {
          if (!Object.hasOwn(ERRORS, code!)) continue;
          const seen = (ERRORS[code as ErrorCode] as readonly unknown[])[2] ?? code;
          const where = `${folder}/${file} ${code}`;
          if (!documentedHere.has(seen as string) && !NOT_ANSWERED_BY_ITS_ROUTES[where] && !undocumented.includes(where)) undocumented.push(where);
        }
      }
    }
    expect(undocumented).toEqual([]);
  });

  it("gives every route the guards' refusals: rate limit always, body and origin rules on POST, 401 with a session requirement", () => {
    for (const route of routes) {
      const op = (doc.paths as Json)[route.path.replace(/:(\w+)/g, "{$1}")][route.method.toLowerCase()];
      const pairs = answered(op);
      const label = `${route.method} ${route.path}`;
      expect(pairs.has("429 RATE_LIMITED"), label).toBe(true);
      expect(pairs.has("500 INTERNAL_SERVER_ERROR"), label).toBe(true);
      expect(op.responses["429"].headers["Retry-After"], label).toBeDefined();
      for (const pair of ["415 UNSUPPORTED_MEDIA_TYPE", "413 PAYLOAD_TOO_LARGE", "400 INVALID_JSON", "403 INVALID_ORIGIN"]) {
        expect(pairs.has(pair), `${label} ${pair}`).toBe(route.method === "POST");
      }
      if (route.login) expect(pairs.has("403 INVALID_ORIGIN"), label).toBe(true);
      const secured = Array.isArray(op.security) && !op.security.some((s: Json) => Object.keys(s).length === 0);
      expect(pairs.has("401 UNAUTHORIZED") || pairs.has("401 oauth:unauthorized"), label).toBe(secured);
    }
  });
});

describe("access in the OpenAPI document", () => {
  it("is the access each route's builder gives its procedure (src/trpc/init.ts meta): its own session where lasting access is needed, a key's refusal where keys are refused", () => {
    const procedures = appRouter._def.procedures as unknown as Record<string, { _def: { meta: ProcedureMeta } }>;
    const docs = operationDocs();
    const wrong: string[] = [];
    for (const route of routes) {
      const meta = procedures[route.procedure]!._def.meta;
      const { doc: op } = docs.get(route.procedure)!;
      const lasting = meta.access === "lasting" || meta.access === "step-up" || meta.access === "fresh" || (meta.access === "permission" && meta.lasting === true);
      const expected = lasting ? ["own-session"] : meta.access === "sign-in" ? ["sign-in"] : meta.access === "public" ? ["public", "optional"] : ["session"];
      if (!expected.includes(op.access)) wrong.push(`${route.method} ${route.path}: ${op.access}, its builder says ${JSON.stringify(meta)}`);
      const byKeyRefused = meta.access === "account" || meta.account === true;
      if (byKeyRefused && !(op.errors ?? []).includes("API_KEY_SESSION_NOT_ALLOWED")) wrong.push(`${route.method} ${route.path}: no API_KEY_SESSION_NOT_ALLOWED`);
    }
    expect(wrong).toEqual([]);
  });
});

/**
 * Codes a module's source names that its own routes never answer, each with the reason (a factory
 * or a table other modules use). Keep it short: anything else named in a module must be documented.
 */
const NOT_ANSWERED_BY_ITS_ROUTES: Record<string, string> = {};

describe("the document follows the config", () => {
  it("servers, cookie name and rate limits; still valid OpenAPI 3.1", async () => {
    const other = openApiDocument(
      resolveConfig({
        secret: "openapi-test-secret-openapi-test-secret",
        publicUrl: "https://id.example.test/",
        basePath: "/auth",
        cookiePrefix: "acme",
        rateLimit: { enabled: false },
        // API keys carry their own per-key limit (429 RATE_LIMITED on every route a key may call).
        apiKey: { enabled: false },
      }),
    );
    expect(other.servers).toEqual([{ url: "https://id.example.test/auth" }]);
    expect(other.components.securitySchemes.sessionCookie?.name).toBe("__Secure-acme.session_token");
    expect(operations(other).filter((op) => answered(op).has("429 RATE_LIMITED")).map((op) => op.operationId)).toEqual([]);
    expect(operations(doc).filter((op) => !answered(op).has("429 RATE_LIMITED")).map((op) => op.operationId)).toEqual([]);
    const result = await validate(structuredClone(other) as never);
    expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  });

  it("is the same document every time it is generated", () => {
    expect(JSON.stringify(openApiDocument(config))).toBe(JSON.stringify(doc));
  });
});
