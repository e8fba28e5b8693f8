import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";

/**
 * Encryption at rest for provider tokens (docs/architecture.md style 6): AES-256-GCM with a fresh
 * 96-bit IV per message (NIST SP 800-38D §8.2.2) and the full 128-bit tag.
 *
 * The envelope `k<key id>.<iv>.<ciphertext>.<tag>` (base64url parts) names the key that sealed
 * it by a fingerprint of that key, not by its place in the list of secrets: the list changes
 * with every rotation (`secrets`, newest first), a fingerprint does not. Envelopes written
 * before rotation existed read `v1.<iv>.<ciphertext>.<tag>`: sealed with the same key
 * derivation from the one secret of that time, so they open with whichever configured secret
 * authenticates them.
 */

const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
/** 64 bits of fingerprint: only tells a handful of configured keys apart, it protects nothing. */
const KEY_ID_BYTES = 8;

export interface AeadKey {
  /** keyId(key): what envelopes sealed with it carry. */
  id: string;
  key: Buffer;
}

export class AeadError extends Error {
  override name = "AeadError";
}

/** RFC 5869 HKDF-SHA256 from the service secret. Version 1 is the derivation of every key in use. */
export function deriveKey(secret: string, version = 1): Buffer {
  return Buffer.from(hkdfSync("sha256", secret, "portcullis/aead", `aes-256-gcm key v${version}`, KEY_BYTES));
}

/** A stable, non-secret name for a key: a truncated SHA-256 of it under a label of its own. */
export function keyId(key: Buffer): string {
  return createHash("sha256").update("portcullis/aead key id\0").update(key).digest().subarray(0, KEY_ID_BYTES).toString("base64url");
}

/** Secrets newest first (the `secrets` config): the first one seals, every one opens. */
export function keyringFromSecrets(secrets: readonly string[]): AeadKey[] {
  return secrets.map((secret) => {
    const key = deriveKey(secret);
    return { id: keyId(key), key };
  });
}

export interface Aead {
  /** `aad` binds the ciphertext to where it is stored (RFC 5116 §2.1): moved elsewhere, it fails. */
  encrypt(plaintext: string, aad: string): string;
  /** Throws AeadError on an unknown key, a malformed envelope or any tampering. */
  decrypt(envelope: string, aad: string): string;
}

function open(key: Buffer, iv: Buffer, ciphertext: Buffer, tag: Buffer, aad: string): string | null {
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(ciphertext), decipher.final()]).toString("utf8");
  } catch {
    return null;
  }
}

/** `keys` newest first: keys[0] seals. */
export function createAead(keys: readonly AeadKey[]): Aead {
  if (keys.length === 0) throw new AeadError("no keys");
  const byId = new Map<string, Buffer>();
  for (const { id, key } of keys) {
    if (key.length !== KEY_BYTES) throw new AeadError(`key ${id} is not 256 bits`);
    if (id !== keyId(key)) throw new AeadError(`key ${id} does not carry its own fingerprint`);
    if (byId.has(id)) throw new AeadError(`key ${id} is listed twice`);
    byId.set(id, key);
  }
  const seal = keys[0]!;

  return {
    encrypt(plaintext, aad) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", seal.key, iv, { authTagLength: TAG_BYTES });
      cipher.setAAD(Buffer.from(aad, "utf8"));
      const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      const parts = [iv, ciphertext, cipher.getAuthTag()].map((b) => b.toString("base64url"));
      return `k${seal.id}.${parts.join(".")}`;
    },
    decrypt(envelope, aad) {
      const parts = envelope.split(".");
      const label = parts[0] ?? "";
      if (parts.length !== 4 || !/^(k[A-Za-z0-9_-]{11}|v[1-9][0-9]{0,8})$/.test(label)) throw new AeadError("malformed envelope");
      const [iv, ciphertext, tag] = parts.slice(1).map((p) => Buffer.from(p, "base64url")) as [Buffer, Buffer, Buffer];
      if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw new AeadError("malformed envelope");
      let candidates: Buffer[];
      if (label.startsWith("k")) {
        const key = byId.get(label.slice(1));
        if (!key) throw new AeadError(`unknown key ${label.slice(1)}`);
        candidates = [key];
      } else if (label === "v1") {
        // Before key ids: sealed under some secret's version-1 key; GCM's tag tells which.
        candidates = [...byId.values()];
      } else {
        throw new AeadError(`unknown key version ${label}`);
      }
      for (const key of candidates) {
        const plaintext = open(key, iv, ciphertext, tag, aad);
        if (plaintext !== null) return plaintext;
      }
      throw new AeadError("authentication failed");
    },
  };
}
