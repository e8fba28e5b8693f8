import type { IncomingMessage } from "node:http";
import { AuthError } from "../src/errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;
const EMPTY = Buffer.alloc(0);

/**
 * The client closed its connection before the body was complete: nothing to answer and nothing
 * of ours failed, so it is logged as an aborted request, never as a server error.
 */
export class RequestAborted extends Error {
  override name = "RequestAborted";
}

/**
 * Reads at most 64 KiB; more answers 413 without buffering the rest. The rest is drained and
 * discarded, never cut off: destroying an unfinished request destroys its socket, and a client
 * still uploading would see a connection reset instead of the 413.
 */
export function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) return Promise.reject(new AuthError("PAYLOAD_TOO_LARGE"));
  // Gone before we got here (say, while the rate limit was looked up): its events have fired already.
  if (req.readableAborted) return Promise.reject(new RequestAborted("the client closed the connection during the body"));
  // Received whole already (a small body comes with its headers) and not yet read: take it from
  // the stream's buffer at once, without listeners and flowing mode. Whole means the parser has
  // ended the message, or holds every byte the Content-Length declared (node:http ends the
  // message a turn later; it never buffers bytes past the declared length into this request).
  const whole = req.complete || (req.headers["content-length"] !== undefined && req.readableLength === declared);
  if (whole && req.readableFlowing === null && req.readableLength <= MAX_BODY_BYTES) {
    return Promise.resolve((req.read() as Buffer | null) ?? EMPTY);
  }
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        done();
        req.resume(); // keep flowing: the rest is discarded
        reject(new AuthError("PAYLOAD_TOO_LARGE"));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      done();
      resolve(Buffer.concat(chunks));
    };
    // A request stream fails only when its connection does (node:http: "aborted", ECONNRESET).
    const onError = (err: Error) => {
      done();
      reject(new RequestAborted("the client closed the connection during the body", { cause: err }));
    };
    const onClose = () => onError(new Error("closed before the end of the body"));
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
}

function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
}

/**
 * The text of a tRPC call's JSON body (tRPC parses it). Only `application/json`: a form, text or
 * octet-stream body is what a page elsewhere can post without a CORS preflight.
 */
export async function readJsonText(req: IncomingMessage): Promise<string> {
  if (mediaType(req) !== "application/json") throw new AuthError("UNSUPPORTED_MEDIA_TYPE");
  return (await readBody(req)).toString("utf8");
}

/** JSON always; form-encoded where the route allows it; anything else is 415. */
export async function parseBody(req: IncomingMessage, allowForm: boolean): Promise<unknown> {
  const raw = await readBody(req);
  const type = mediaType(req);
  if (raw.length === 0 && (type === "" || type === "application/json" || (allowForm && type === "application/x-www-form-urlencoded"))) {
    return {};
  }
  if (type === "application/json") {
    try {
      return JSON.parse(raw.toString("utf8"));
    } catch {
      throw new AuthError("INVALID_JSON");
    }
  }
  if (allowForm && type === "application/x-www-form-urlencoded") {
    return Object.fromEntries(new URLSearchParams(raw.toString("utf8")));
  }
  throw new AuthError("UNSUPPORTED_MEDIA_TYPE");
}

/**
 * Reads a non-GET call's body here, not in tRPC's adapter: JSON only (415 otherwise), 64 KiB, and
 * a client that goes away mid-body ends the request (the adapter would wait for it forever).
 * A refusal is handed to the adapter, which shapes it like every tRPC error.
 */
export async function readTrpcBody(req: IncomingMessage): Promise<AuthError | undefined> {
  if (req.method === "GET" || req.method === "HEAD") return undefined;
  try {
    Object.assign(req, { body: await readJsonText(req) }); // the adapter takes a string `req.body` as the body
    return undefined;
  } catch (err) {
    if (err instanceof AuthError) return err;
    throw err;
  }
}
