import { STATUS_CODES, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { App } from "../src/app.ts";
import { AuthError, errorBody, type ErrorCode } from "../src/errors.ts";
import { nextRequestId } from "./request-id.ts";

/** node:http's refusals that keep node's own status rather than a plain 400, in the contract's shape. */
const CLIENT_ERRORS: Record<string, ErrorCode> = {
  HPE_HEADER_OVERFLOW: "REQUEST_HEADER_FIELDS_TOO_LARGE",
  ERR_HTTP_REQUEST_TIMEOUT: "REQUEST_TIMEOUT",
};

/**
 * The parser refused the request (request line, header, chunked body) or it came too slowly: no
 * request object exists, so the JSON answer goes on the socket itself (docs/wire-contract.md §9), and the
 * connection closes, as the parser cannot find the next request in it. Only the table's text goes
 * out: the parser's message may quote the client's bytes. A socket failure (ECONNRESET, EPIPE), a
 * socket that cannot be written or an answer already under way leave nothing to say.
 */
export function answerClientError(app: App, err: Error & { code?: string }, socket: Duplex) {
  const code = err.code ?? "";
  const mapped = Object.hasOwn(CLIENT_ERRORS, code) ? CLIENT_ERRORS[code] : undefined;
  const refusal = mapped !== undefined || code.startsWith("HPE_");
  // Node's own default handler checks the same: bytes of an answer already sent cannot be followed by another.
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (!refusal || !socket.writable || inFlight?.headersSent) {
    socket.destroy();
    return;
  }
  const error = new AuthError(mapped ?? "BAD_REQUEST");
  const body = JSON.stringify(errorBody(error));
  const requestId = nextRequestId(); // no request was parsed: none of the caller's to take
  app.logger.info({ requestId, route: "(refused by node:http)", status: error.status, reason: code }, "request");
  socket.end(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status]}\r\n` +
      "content-type: application/json; charset=utf-8\r\n" +
      `content-length: ${Buffer.byteLength(body)}\r\n` +
      `cache-control: no-store\r\nx-request-id: ${requestId}\r\nconnection: close\r\n\r\n` +
      body,
    () => socket.destroy(),
  );
}
