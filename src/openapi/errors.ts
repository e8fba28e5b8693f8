import type { Route } from "../../rest-bridge/routes.ts";
import type { ResolvedConfig } from "../config/index.ts";
import { ERRORS, type ErrorCode } from "../errors.ts";
import type { JsonSchema, OperationDoc } from "./doc.ts";

/** What one route can answer besides success: contract codes, and codes answered in RFC 6749 §5.2's shape with their `error`. */
export interface RouteErrors {
  contract: ErrorCode[];
  oauth: Map<ErrorCode, string>;
}

/** The code clients see (errors.ts: one wire code may answer with two statuses, e.g. INVALID_ID_TOKEN as INVALID_TOKEN). */
export const wireCode = (code: ErrorCode): string => (ERRORS[code] as readonly [number, string, string?])[2] ?? code;
export const statusOf = (code: ErrorCode): number => ERRORS[code][0];

/**
 * The route's failures: the guards every route of its kind passes (rest-bridge/server.ts: rate
 * limit; a POST's body rules and CSRF origin check; login CSRF), input validation, the access
 * rule, the module switch, then the doc's own permissions and errors.
 */
export function routeErrors(route: Route, doc: OperationDoc, hasInput: boolean, config: ResolvedConfig): RouteErrors {
  const codes = new Set<ErrorCode>(["INTERNAL_SERVER_ERROR"]);
  if (config.rateLimit.enabled) codes.add("RATE_LIMITED");
  if (route.method === "POST") {
    for (const c of ["INVALID_JSON", "PAYLOAD_TOO_LARGE", "UNSUPPORTED_MEDIA_TYPE", "INVALID_ORIGIN", "MISSING_OR_NULL_ORIGIN"] as const) codes.add(c);
  }
  if (route.login) codes.add("INVALID_ORIGIN");
  if (hasInput) codes.add("VALIDATION_ERROR");
  if (doc.access === "session" || doc.access === "own-session") codes.add("UNAUTHORIZED");
  if (doc.access === "own-session" || doc.access === "sign-in") codes.add("IMPERSONATION_NOT_ALLOWED");
  // A request with the API-key header (docs/machine-access.md): a key that authenticates nobody; a key where a key may not act.
  const keysAuthenticate = config.apiKey.enabled && config.apiKey.enableSessionForAPIKeys;
  if (keysAuthenticate && (doc.access === "session" || doc.access === "own-session" || doc.access === "optional")) {
    for (const c of ["INVALID_API_KEY", "USAGE_EXCEEDED", "RATE_LIMITED"] as const) codes.add(c);
  }
  if (keysAuthenticate && (doc.access === "own-session" || doc.access === "sign-in")) codes.add("API_KEY_SESSION_NOT_ALLOWED");
  if (doc.switchable) codes.add("NOT_FOUND");
  for (const c of doc.permissions ?? []) codes.add(c);
  for (const c of doc.errors ?? []) codes.add(c);
  const oauth = new Map(Object.entries(doc.oauthErrors ?? {}) as [ErrorCode, string][]);
  return { contract: [...codes].filter((c) => !oauth.has(c)), oauth };
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** One response per status: the codes it carries (enum) and what each means. */
export function errorResponses({ contract, oauth }: RouteErrors): Record<string, JsonSchema> {
  const statuses = [...new Set([...contract, ...oauth.keys()].map(statusOf))].sort((a, b) => a - b);
  const responses: Record<string, JsonSchema> = {};
  for (const status of statuses) {
    const here = contract.filter((c) => statusOf(c) === status);
    const rfc = [...oauth].filter(([c]) => statusOf(c) === status);
    const shapes: JsonSchema[] = [];
    if (here.length) shapes.push({ allOf: [ref("Error")], properties: { code: { enum: [...new Set(here.map(wireCode))] } } });
    if (rfc.length) shapes.push({ allOf: [ref("OAuthError")], properties: { error: { enum: [...new Set(rfc.map(([, e]) => e))] } } });
    const lines = [
      ...here.map((c) => `- \`${wireCode(c)}\`: ${ERRORS[c][1]}`),
      ...rfc.map(([c, e]) => `- \`${e}\` (RFC 6749 §5.2 shape; \`${wireCode(c)}\` for tRPC callers): ${ERRORS[c][1]}`),
    ];
    responses[String(status)] = {
      description: lines.join("\n"),
      // Every contract code of this status, also those the RFC shape answers under its own name (tRPC callers see them as data.authCode).
      "x-error-codes": [...new Set([...here, ...rfc.map(([c]) => c)].map(wireCode))],
      ...(status === 429 ? { headers: { "Retry-After": { description: "Seconds to wait", schema: { type: "integer" } } } } : {}),
      content: { "application/json": { schema: shapes.length === 1 ? shapes[0] : { anyOf: shapes } } },
    };
  }
  return responses;
}
