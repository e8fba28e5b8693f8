import type { z } from "zod";
import type { ErrorCode } from "../errors.ts";

/**
 * What the OpenAPI document says about one procedure beyond its route (rest-bridge/routes.ts)
 * and its zod input: the answer's schema, who may call it, and the failures of its own. Kept out
 * of the procedures (no `.output()`: validating every answer would cost time on the hot path);
 * test/integration/openapi/openapi-outputs.types.ts checks at compile time that each procedure's real output fits
 * its schema, and the round trip (test/integration/openapi/openapi.test.ts) checks real answers.
 */

/** A JSON Schema object as zod's toJSONSchema writes it. */
export type JsonSchema = Record<string, unknown>;

/**
 * Who may call it:
 * - `public`: no session read;
 * - `optional`: works without one, and a session, when sent, is the subject (claims, 2FA);
 * - `session`: 401 UNAUTHORIZED without a live session (trpc/init.ts authedProcedure);
 * - `own-session`: also 403 IMPERSONATION_NOT_ALLOWED for an impersonation session (lastingAccessProcedure);
 * - `sign-in`: no session needed, but one the request carries must be the user's own (403 IMPERSONATION_NOT_ALLOWED).
 */
export type Access = "public" | "optional" | "session" | "own-session" | "sign-in";

export interface OperationDoc<Output extends z.ZodType = z.ZodType> {
  summary: string;
  description?: string;
  access: Access;
  /** The JSON answer of a 200 (what the procedure returns; the bridge writes it as is). */
  output: Output;
  /** The 403 codes of the admin permissions it checks (core/permissions.ts), for callers whose role lacks one. */
  permissions?: readonly ErrorCode[];
  /** Its own failures (service rules), beyond the shared guards, validation and `access`. */
  errors?: readonly ErrorCode[];
  /**
   * Failures answered in RFC 6749 §5.2's `{ error, error_description }` shape (OAuthError):
   * contract code → the RFC `error` value.
   */
  oauthErrors?: Readonly<Partial<Record<ErrorCode, string>>>;
  /** The success status when it is not 200 (RFC 7591 registration answers 201 Created). */
  status?: 201;
  /** `always`: REST answers 302 (`output` is what tRPC callers read); `with-callback`: 302 when a callbackURL is given. */
  redirect?: "always" | "with-callback";
  /** A route streamed as NDJSON (rest-bridge/routes.ts `ndjson`): the schema of one line; `output` is a tRPC page. */
  ndjsonItem?: z.ZodType;
  /** The module family's config switch (`twoFactor.enabled`, `passkey.enabled`): off, every route answers 404 NOT_FOUND. */
  switchable?: boolean;
  /** What the zod input cannot say in JSON Schema (a refinement needing one of two fields, a z.custom map): edits the input schema. */
  input?: (schema: JsonSchema) => void;
}

/** One module's tag and its procedures' docs, keyed by the dotted procedure path. */
export interface ModuleDoc<Ops extends Record<string, OperationDoc> = Record<string, OperationDoc>> {
  tag: string;
  description: string;
  operations: Ops;
}

/** Keeps each operation's exact output type (test/integration/openapi/openapi-outputs.types.ts reads it). */
export function moduleDoc<const Ops extends Record<string, OperationDoc>>(doc: ModuleDoc<Ops>): ModuleDoc<Ops> {
  return doc;
}

/** `input` helper: at least one of these fields (a zod `.refine` that JSON Schema cannot carry). */
export function requireOneOf(...fields: string[]) {
  return (schema: JsonSchema) => {
    schema.anyOf = fields.map((f) => ({ required: [f] }));
  };
}

/** `input` helper: these fields are required although the zod schema lets them be absent (the procedure answers its own error). */
export function requireFields(...fields: string[]) {
  return (schema: JsonSchema) => {
    schema.required = [...new Set([...((schema.required as string[] | undefined) ?? []), ...fields])];
  };
}
