import type { App } from "../../app.ts";
import type { IPasskey } from "../../db/entities/index.ts";

/**
 * The Relying Party (W3C WebAuthn L3 §5.1.3 rp, §7.1 steps 9 and 13): its id defaults to the host
 * name of our publicUrl, and the origins a ceremony may come from default to that URL's origin.
 * Configured or derived, never the request's Origin header (better-auth trusts that header when
 * no origin is configured: any page that reaches the endpoint would then name its own origin).
 */
export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

export function relyingParty(app: App): RelyingParty {
  const { rpID, rpName, origins } = app.config.passkey;
  return {
    id: rpID ?? new URL(app.origin).hostname,
    name: rpName,
    // clientDataJSON.origin is a serialized origin (L3 §5.8.1): no path, no trailing slash.
    origins: (origins ?? [app.origin]).map((o) => new URL(o).origin),
  };
}

/** L3 §5.8.4 AuthenticatorTransport values (and "cable", "smart-card" of the Level 3 draft). */
const TRANSPORTS = new Set(["ble", "cable", "hybrid", "internal", "nfc", "smart-card", "usb"]);

/** The known transports, once each, comma-joined (better-auth's column format); "" for none. */
export function joinTransports(reported: readonly string[] | undefined): string {
  return [...new Set((reported ?? []).filter((t) => TRANSPORTS.has(t)))].join(",");
}

export function splitTransports(stored: string | null | undefined): string[] | undefined {
  const list = (stored ?? "").split(",").filter((t) => TRANSPORTS.has(t));
  return list.length ? list : undefined;
}

/** A passkey as better-auth's adapter returns it (its field names: `credentialID`, `userId`). */
export function publicPasskey(p: Omit<IPasskey, "user"> & { user: { id: string } | string }) {
  return {
    id: p.id,
    name: p.name ?? null,
    publicKey: p.publicKey,
    userId: typeof p.user === "string" ? p.user : p.user.id,
    credentialID: p.credentialId,
    counter: p.counter,
    deviceType: p.deviceType,
    backedUp: p.backedUp,
    transports: p.transports ?? "",
    createdAt: p.createdAt.toISOString(),
    aaguid: p.aaguid ?? null,
  };
}

export type PublicPasskey = ReturnType<typeof publicPasskey>;

/** @simplewebauthn/server, loaded on the first passkey ceremony (~26 MiB a server without passkeys never pays). */
export const webauthn = () => import("@simplewebauthn/server");
