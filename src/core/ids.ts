import { randomBytes } from "node:crypto";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Ids come from callers: anything but a UUID names nothing (and PostgreSQL would reject it as a uuid). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/*
 * Monotonic UUIDv7 (RFC 9562 §5.7, counter in rand_a per §6.2 method 1): ids written within
 * one millisecond (or one tick of an injected clock) still sort in write order, so "newest
 * first" is exact. Process-wide on purpose, like the RNG: ordering is a property of the process.
 */
let lastMs = 0;
let counter = 0;

export function uuidv7(nowMs = Date.now()): string {
  if (nowMs > lastMs) {
    lastMs = nowMs;
    counter = 0;
  } else if (++counter > 0xfff) {
    lastMs += 1;
    counter = 0;
  }
  const bytes = randomBytes(16);
  bytes.writeUIntBE(lastMs, 0, 6);
  bytes[6] = 0x70 | (counter >> 8);
  bytes[7] = counter & 0xff;
  bytes[8] = 0x80 | (bytes[8]! & 0x3f);
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
