import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto";

/**
 * Encryption at rest for provider tokens (ARCHITECTURE.md style 6): AES-256-GCM with a fresh
 * 96-bit IV per message (NIST SP 800-38D §8.2.2) and the full 128-bit tag. The envelope
 * `v<key version>.<iv>.<ciphertext>.<tag>` (base64url parts) names the key that sealed it, so a
 * keyring can hold an old key for reading while a new one seals: keys rotate without a rewrite.
 */

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;

export interface AeadKey {
  version: number;
  key: Buffer;
}

export class AeadError extends Error {
  override name = "AeadError";
}

/** RFC 5869 HKDF-SHA256: one independent key per version from the service secret. */
export function deriveKey(secret: string, version: number): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "portcullis/aead", `aes-256-gcm key v${version}`, KEY_BYTES));
}

/** Secrets oldest first: secret i gets version i + 1, and the last one seals. */
export function keyringFromSecrets(secrets: readonly string[]): AeadKey[] {
  return secrets.map((secret, i) => ({ version: i + 1, key: deriveKey(secret, i + 1) }));
}

export interface Aead {
  /** `aad` binds the ciphertext to where it is stored (RFC 5116 §2.1): moved elsewhere, it fails. */
  encrypt(plaintext: string, aad: string): string;
  /** Throws AeadError on an unknown key version, a malformed envelope or any tampering. */
  decrypt(envelope: string, aad: string): string;
}

export function createAead(keys: readonly AeadKey[]): Aead {
  if (keys.length === 0) throw new AeadError("no keys");
  const byVersion = new Map<number, Buffer>();
  for (const { version, key } of keys) {
    if (!Number.isInteger(version) || version < 1) throw new AeadError(`bad key version ${version}`);
    if (key.length !== KEY_BYTES) throw new AeadError(`key v${version} is not 256 bits`);
    byVersion.set(version, key);
  }
  const current = Math.max(...byVersion.keys());
  const sealKey = byVersion.get(current)!;

  return {
    encrypt(plaintext, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", sealKey, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const parts = [iv, ciphertext, cipher.getAuthTag()].map((b) => b.toString("base64url"));
      return `v${current}.${parts.join(".")}`;
    },
    decrypt(envelope, aad) {
      const parts = envelope.split(".");
      const version = /^v([1-9][0-9]{0,8})$/.exec(parts[0] ?? "")?.[1];
      if (parts.length !== 4 || !version) throw new AeadError("malformed envelope");
      const key = byVersion.get(Number(version));
      if (!key) throw new AeadError(`unknown key version v${version}`);
      const [iv, ciphertext, tag] = parts.slice(1).map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer];
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new AeadError("malformed envelope");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
        decipher.setAAD(Buffer.from(aad, "utf8"));
        decipher.setAuthTag(tag);
        return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
      } catch {
        throw new AeadError("authentication failed");
      }
    },
  };
}
