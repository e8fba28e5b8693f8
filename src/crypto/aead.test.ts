import { createCipheriv, randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { AeadError, createAead, deriveKey, keyId, keyringFromSecrets } from "./aead.ts";

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

/** An envelope as the single-secret release wrote it: `v1.`, key deriveKey(secret, 1). */
function legacyV1(secret: string, plaintext: string, aad: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", deriveKey(secret, 1), iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
  return `v1.${[iv, ciphertext, cipher.getAuthTag()].map((b) => b.toString("base64url")).join(".")}`;
}

const idOf = (secret: string) => keyId(deriveKey(secret));

describe("aead (AES-256-GCM, envelope named by key id)", () => {
  it("round-trips, with a fresh IV each time", () => {
    const aead = createAead(keyringFromSecrets([SECRET_A]));
    const plaintext = "ya29.a0AfH6SMB-token ✓ with unicode";
    const one = aead.encrypt(plaintext, AAD);
    const two = aead.encrypt(plaintext, AAD);
    expect(one).toMatch(/^k[A-Za-z0-9_-]{11}\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(one.startsWith(`k${idOf(SECRET_A)}.`)).toBe(true);
    expect(one).not.toBe(two);
    expect(one).not.toContain("ya29");
    expect(aead.decrypt(one, AAD)).toBe(plaintext);
    expect(aead.decrypt(two, AAD)).toBe(plaintext);
    expect(aead.decrypt(aead.encrypt("", AAD), AAD)).toBe("");
  });

  it("fails on any tampering: iv, ciphertext, tag, key id, associated data", () => {
    const aead = createAead(keyringFromSecrets([SECRET_A]));
    const sealed = aead.encrypt("refresh-token-value", AAD);
    for (const part of [1, 2, 3]) expect(() => aead.decrypt(flip(sealed, part), AAD)).toThrow(AeadError);
    expect(() => aead.decrypt(sealed, "account:other:access_token")).toThrow(AeadError);
    expect(() => aead.decrypt(sealed.replace(/^k[^.]+\./, `k${idOf(SECRET_B)}.`), AAD)).toThrow(/unknown key/);
    expect(() => aead.decrypt(sealed.replace(/^k[^.]+\./, "v2."), AAD)).toThrow(/unknown key version v2/);
    expect(() => aead.decrypt(sealed.split(".").slice(0, 3).join("."), AAD)).toThrow(/malformed/);
    expect(() => aead.decrypt("plain-text-token", AAD)).toThrow(/malformed/);
  });

  it("a different secret cannot open it", () => {
    const sealed = createAead(keyringFromSecrets([SECRET_A])).encrypt("x", AAD);
    expect(() => createAead(keyringFromSecrets([SECRET_B])).decrypt(sealed, AAD)).toThrow(/unknown key/);
  });

  it("rotates: the first secret seals, the others still open; key ids do not depend on list position", () => {
    const before = createAead(keyringFromSecrets([SECRET_A]));
    const old = before.encrypt("sealed under A", AAD);

    const rotated = createAead(keyringFromSecrets([SECRET_B, SECRET_A]));
    const fresh = rotated.encrypt("sealed under B", AAD);
    expect(fresh.startsWith(`k${idOf(SECRET_B)}.`)).toBe(true);
    expect(rotated.decrypt(old, AAD)).toBe("sealed under A");
    expect(rotated.decrypt(fresh, AAD)).toBe("sealed under B");
    expect(() => before.decrypt(fresh, AAD)).toThrow(/unknown key/);
    // Reordered lists, or A alone again: the same id names the same key.
    expect(createAead(keyringFromSecrets([SECRET_A, SECRET_B])).decrypt(fresh, AAD)).toBe("sealed under B");

    // A retired: what it sealed no longer opens.
    const retired = createAead(keyringFromSecrets([SECRET_B]));
    expect(retired.decrypt(fresh, AAD)).toBe("sealed under B");
    expect(() => retired.decrypt(old, AAD)).toThrow(/unknown key/);
  });

  it("still opens the `v1.` envelopes of the single-secret release, under whichever secret sealed them", () => {
    const v1 = legacyV1(SECRET_A, "stored before rotation", AAD);
    expect(createAead(keyringFromSecrets([SECRET_A])).decrypt(v1, AAD)).toBe("stored before rotation");
    expect(createAead(keyringFromSecrets([SECRET_B, SECRET_A])).decrypt(v1, AAD)).toBe("stored before rotation");
    expect(() => createAead(keyringFromSecrets([SECRET_B])).decrypt(v1, AAD)).toThrow(/authentication failed/);
    expect(() => createAead(keyringFromSecrets([SECRET_B, SECRET_A])).decrypt(v1, "account:other:access_token")).toThrow(/authentication failed/);
  });

  it("rejects bad keyrings", () => {
    expect(deriveKey(SECRET_A, 1).equals(deriveKey(SECRET_A, 2))).toBe(false);
    expect(deriveKey(SECRET_A)).toHaveLength(32);
    expect(() => createAead([])).toThrow(AeadError);
    expect(() => createAead([{ id: keyId(Buffer.alloc(16)), key: Buffer.alloc(16) }])).toThrow(/256 bits/);
    expect(() => createAead([{ id: "AAAAAAAAAAA", key: deriveKey(SECRET_A) }])).toThrow(/fingerprint/);
    expect(() => createAead(keyringFromSecrets([SECRET_A, SECRET_A]))).toThrow(/twice/);
  });
});
