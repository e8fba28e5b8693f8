import { describe, expect, it } from "vitest";
import { AeadError, createAead, deriveKey, keyringFromSecrets } from "./aead.ts";

const SECRET_A = "first-secret-first-secret-first-secret-01";
const SECRET_B = "second-secret-second-secret-second-secret";
const AAD = "account:6f1c6a3e:access_token";

/** Flips one bit of a base64url part of the envelope. */
function flip(envelope: string, part: number): string {
  const parts = envelope.split(".");
  const bytes = Buffer.from(parts[part]!, "base64url");
  bytes[0]! ^= 0x01;
  parts[part] = bytes.toString("base64url");
  return parts.join(".");
}

describe("aead (AES-256-GCM, versioned envelope)", () => {
  it("round-trips, with a fresh IV each time", () => {
    const aead = createAead(keyringFromSecrets([SECRET_A]));
    const plaintext = "ya29.a0AfH6SMB-token ✓ with unicode";
    const one = aead.encrypt(plaintext, AAD);
    const two = aead.encrypt(plaintext, AAD);
    expect(one).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(one).not.toBe(two);
    expect(one).not.toContain("ya29");
    expect(aead.decrypt(one, AAD)).toBe(plaintext);
    expect(aead.decrypt(two, AAD)).toBe(plaintext);
    expect(aead.decrypt(aead.encrypt("", AAD), AAD)).toBe("");
  });

  it("fails on any tampering: iv, ciphertext, tag, version, associated data", () => {
    const aead = createAead(keyringFromSecrets([SECRET_A]));
    const sealed = aead.encrypt("refresh-token-value", AAD);
    for (const part of [1, 2, 3]) expect(() => aead.decrypt(flip(sealed, part), AAD)).toThrow(AeadError);
    expect(() => aead.decrypt(sealed, "account:other:access_token")).toThrow(AeadError);
    expect(() => aead.decrypt(sealed.replace(/^v1\./, "v2."), AAD)).toThrow(/unknown key version/);
    expect(() => aead.decrypt(sealed.split(".").slice(0, 3).join("."), AAD)).toThrow(/malformed/);
    expect(() => aead.decrypt("plain-text-token", AAD)).toThrow(/malformed/);
  });

  it("a different secret cannot open it", () => {
    const sealed = createAead(keyringFromSecrets([SECRET_A])).encrypt("x", AAD);
    expect(() => createAead([{ version: 1, key: deriveKey(SECRET_B, 1) }]).decrypt(sealed, AAD)).toThrow(/authentication failed/);
  });

  it("rotates keys: the newest seals, older versions still open until dropped", () => {
    const before = createAead(keyringFromSecrets([SECRET_A]));
    const old = before.encrypt("sealed under v1", AAD);

    const rotated = createAead(keyringFromSecrets([SECRET_A, SECRET_B]));
    const fresh = rotated.encrypt("sealed under v2", AAD);
    expect(fresh.startsWith("v2.")).toBe(true);
    expect(rotated.decrypt(old, AAD)).toBe("sealed under v1");
    expect(rotated.decrypt(fresh, AAD)).toBe("sealed under v2");
    // The old keyring cannot read what the new key sealed.
    expect(() => before.decrypt(fresh, AAD)).toThrow(/unknown key version v2/);

    // v1 retired: what it sealed no longer opens.
    const retired = createAead([{ version: 2, key: deriveKey(SECRET_B, 2) }]);
    expect(retired.decrypt(fresh, AAD)).toBe("sealed under v2");
    expect(() => retired.decrypt(old, AAD)).toThrow(/unknown key version v1/);
  });

  it("derives independent keys per version and rejects bad keyrings", () => {
    expect(deriveKey(SECRET_A, 1).equals(deriveKey(SECRET_A, 2))).toBe(false);
    expect(deriveKey(SECRET_A, 1)).toHaveLength(32);
    expect(() => createAead([])).toThrow(AeadError);
    expect(() => createAead([{ version: 1, key: Buffer.alloc(16) }])).toThrow(/256 bits/);
    expect(() => createAead([{ version: 0, key: deriveKey(SECRET_A, 0) }])).toThrow(/version/);
  });
});
