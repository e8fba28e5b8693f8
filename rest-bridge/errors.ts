import type { ServerResponse } from "node:http";
import { type AuthError, errorBody, OAuthError } from "../src/errors.ts";

export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string | string[]> = {}) {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    // A procedure may make its answer cacheable (GET /jwks); everything else is no-store.
    "cache-control": typeof headers["cache-control"] === "string" ? headers["cache-control"] : "no-store",
  });
  res.end(text);
}

/**
 * `{ code, message }` (+ issues on validation errors, requestId on 5xx) with the contract's status;
 * OAuth errors as RFC 6749 §5.2 `{ error, error_description }`.
 */
export function sendError(res: ServerResponse, err: AuthError, requestId: string) {
  const body = err instanceof OAuthError ? { error: err.oauthError, error_description: err.message } : errorBody(err, requestId);
  sendJson(res, err.status, body, err.headers ?? {});
}
