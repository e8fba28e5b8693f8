import { hash, verify } from "@node-rs/argon2";

/**
 * argon2id with the OWASP parameters (m=19456 KiB, t=2, p=1). @node-rs/argon2 hashes on the
 * libuv thread pool, so the event loop keeps serving while a hash runs.
 * `algorithm: 2` is Algorithm.Argon2id (a const enum that isolatedModules rejects; STACK.md trap 5).
 */
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** NFKC so that the same password typed on different keyboards/IMEs verifies (NIST SP 800-63B §5.1.1.2). */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

export function hashPassword(password: string): Promise<string> {
  return hash(normalizePassword(password), OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    return await verify(passwordHash, normalizePassword(password));
  } catch {
    return false;
  }
}

let dummyHash: Promise<string> | undefined;

/**
 * Burns the same time as a real verify when there is no user (no enumeration by timing).
 * The dummy hash is made once per process.
 */
export async function verifyAgainstDummy(password: string): Promise<false> {
  dummyHash ??= hashPassword("portcullis-dummy-password-for-timing");
  await verifyPassword(await dummyHash, password);
  return false;
}
