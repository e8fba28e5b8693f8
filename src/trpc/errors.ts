import { TRPCError } from "@trpc/server";
import { ZodError } from "zod";
import { DriverException } from "../db/mikro-orm.ts";
import { AuthError } from "../errors.ts";

/**
 * Maps any error a procedure can raise onto the contract: AuthError as is, zod input errors as
 * VALIDATION_ERROR naming each field, anything else as a 500 whose cause stays in the log.
 */
export function toAuthError(err: unknown): AuthError {
  if (err instanceof AuthError) return err;
  if (err instanceof TRPCError) {
    if (err.cause instanceof AuthError) return err.cause;
    // tRPC's adapter reads the body lazily: a malformed JSON body surfaces as BAD_REQUEST caused by a SyntaxError.
    if (err.code === "PARSE_ERROR" || (err.code === "BAD_REQUEST" && err.cause instanceof SyntaxError)) {
      return new AuthError("INVALID_JSON", { cause: err });
    }
    if (err.cause instanceof ZodError || err.code === "BAD_REQUEST") {
      const issues =
        err.cause instanceof ZodError
          ? err.cause.issues.map((i) => ({ path: i.path.join(".") || "(body)", message: i.message }))
          : [];
      const message = issues.length
        ? `Invalid ${issues.map((i) => `${i.path}: ${i.message}`).join("; ")}`
        : "Invalid request";
      return new AuthError("VALIDATION_ERROR", { message, issues, cause: err });
    }
    if (err.code === "NOT_FOUND") return new AuthError("NOT_FOUND", { cause: err });
    if (err.code === "PAYLOAD_TOO_LARGE") return new AuthError("PAYLOAD_TOO_LARGE", { cause: err });
    if (err.code === "UNSUPPORTED_MEDIA_TYPE") return new AuthError("UNSUPPORTED_MEDIA_TYPE", { cause: err });
    if (err.code === "METHOD_NOT_SUPPORTED") return new AuthError("NOT_FOUND", { cause: err });
  }
  if (rejectsNul(err)) return new AuthError("VALIDATION_ERROR", { message: "Invalid request: text cannot contain NUL (U+0000) characters", cause: err });
  return new AuthError("INTERNAL_SERVER_ERROR", { cause: err });
}

/**
 * A U+0000 in a string field, wherever it ends up in a statement: PostgreSQL refuses it in a bound
 * parameter (22021) and in jsonb (22P05); where MikroORM inlines the value into the SQL text,
 * PostgreSQL answers "invalid message format" and SQLite "unrecognized token" (the SQL text ends
 * at the NUL, inside the quoted value: always an error, never other SQL). The statement fails
 * whole, inside its transaction: the caller's bad input, not a 500.
 */
function rejectsNul(err: unknown): boolean {
  let e: unknown = err;
  for (let depth = 0; e && depth < 5; depth++, e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (code === "22021" || code === "22P05") return true;
    if (e instanceof DriverException && e.message.includes("\u0000")) return true;
  }
  return false;
}
