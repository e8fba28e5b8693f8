import type { IncomingMessage } from "node:http";
import { AuthError } from "../src/errors.ts";

export const MAX_BODY_BYTES = 64 * 1024;

/** Reads at most 64 KiB; more answers 413 without buffering the rest. */
export async function readBody(req: IncomingMessage): Promise<Buffer> {
  const declared = Number(req.headers["content-length"] ?? 0);
  if (declared > MAX_BODY_BYTES) throw new AuthError("PAYLOAD_TOO_LARGE");
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new AuthError("PAYLOAD_TOO_LARGE");
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}

function mediaType(req: IncomingMessage): string {
  return (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
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
