import { randomUUID } from "node:crypto";

/**
 * Request ids: the caller's `X-Request-Id` when it is a sane token (a proxy's or a client's id,
 * so its logs and ours join up), else one of ours: UUID-shaped, a random per-process prefix and a
 * counter (unique across processes, no random bytes drawn per request). Either way the answer
 * carries it back in `X-Request-Id` and every log line of the request names it.
 */

const REQUEST_ID_PREFIX = randomUUID().slice(0, 24);
let requestSeq = 0;

export function nextRequestId(): string {
  requestSeq = (requestSeq + 1) % 0x1000000000000;
  return REQUEST_ID_PREFIX + requestSeq.toString(16).padStart(12, "0");
}

/** Longest id taken from a caller: UUIDs (36), ULIDs (26), trace ids (AWS X-Ray's Root=... is ~40) fit. */
export const MAX_REQUEST_ID_LENGTH = 128;
/** Letters, digits and `-_.:=+/@`: no spaces, quotes, commas or control characters (logs, header). */
const SANE_REQUEST_ID = /^[A-Za-z0-9\-_.:=+/@]+$/;

/** The caller's id when sane (see above), else a new one. */
export function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === "string" && header.length > 0 && header.length <= MAX_REQUEST_ID_LENGTH && SANE_REQUEST_ID.test(header)) return header;
  return nextRequestId();
}
