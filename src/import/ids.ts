import { createHash } from "node:crypto";

/**
 * Portcullis ids are UUIDs (a `uuid` column on PostgreSQL); better-auth's default ids are 32
 * random alphanumerics. An id that is a UUID already (better-auth's `generateId: "uuid"`) is
 * kept; any other becomes the name-based UUID (RFC 9562 §5.5, version 5) of it in this
 * namespace, the same on every run: re-running the import finds the rows it wrote, and an app
 * translates the user ids it keeps elsewhere with this same function.
 */
export const IMPORT_NAMESPACE = "5f62aea9-1f8f-497c-ab02-9d84528c6bbe";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function uuidV5(name: string, namespace: string): string {
  const digest = createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name, "utf8").digest();
  const bytes = digest.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50; // version 5
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The Portcullis id of a better-auth row id (users, accounts, sessions, verifications alike). */
export function importedId(betterAuthId: string): string {
  return UUID.test(betterAuthId) ? betterAuthId.toLowerCase() : uuidV5(betterAuthId, IMPORT_NAMESPACE);
}
