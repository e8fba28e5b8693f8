import { scrypt, timingSafeEqual } from "node:crypto";
import { hash, verify } from "@node-rs/argon2";

/**
 * argon2id with the OWASP parameters (m=19456 KiB, t=2, p=1). @node-rs/argon2 hashes on the
 * libuv thread pool, so the event loop keeps serving while a hash runs.
 * `algorithm: 2` is Algorithm.Argon2id (a const enum that isolatedModules rejects).
 */
const OPTIONS = { algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** What every hash written now starts with: anything else is upgraded at the next password sign-in. */
const CURRENT_PREFIX = "$argon2id$v=19$m=19456,t=2,p=1$";

/**
 * better-auth's hash (@better-auth/utils/password): `<salt>:<key>`, both lower-case hex, the
 * salt 16 random bytes and the key 64 bytes of scrypt (N=16384, r=16, p=1) over the NFKC
 * password. The salt goes into scrypt as its hex text, not as the bytes it spells.
 * Kept by the better-auth import (src/import/) until the user's first sign-in re-hashes it.
 */
const BETTER_AUTH_SCRYPT = /^([0-9a-f]{16,128}):([0-9a-f]{128})$/;
const SCRYPT_PARAMS = { N: 16384, r: 16, p: 1 } as const;
const SCRYPT_KEY_BYTES = 64;
/** 128·N·r bytes of working memory; node's default cap (32 MiB) is exactly that, and refuses it. */
const SCRYPT_MAXMEM = 2 * 128 * SCRYPT_PARAMS.N * SCRYPT_PARAMS.r;

/**
 * Password hashes (argon2id, and scrypt for imported credentials) started and not finished:
 * running on libuv's thread pool, one per thread, or queued for it. The CLI sizes that pool to
 * the cores (bin/portcullis.cjs): more hashes at once than cores only thrash the caches and hold
 * 19 MiB each. GET /metrics shows the count; a sign-in flood shows here first.
 */
let inFlight = 0;

export function hashesInFlight(): number {
  return inFlight;
}

async function counted<T>(run: () => Promise<T>): Promise<T> {
  inFlight++;
  try {
    return await run();
  } finally {
    inFlight--;
  }
}

/** NFKC so that the same password typed on different keyboards/IMEs verifies (NIST SP 800-63B §5.1.1.2). */
export function normalizePassword(password: string): string {
  return password.normalize("NFKC");
}

export function hashPassword(password: string): Promise<string> {
  return counted(() => hash(normalizePassword(password), OPTIONS));
}

/** True for better-auth's scrypt format (an imported, not yet upgraded credential). */
export function isBetterAuthHash(passwordHash: string): boolean {
  return BETTER_AUTH_SCRYPT.test(passwordHash);
}

/** A hash this service can verify but would not write today (better-auth's scrypt, other argon2 parameters). */
export function needsRehash(passwordHash: string): boolean {
  return !passwordHash.startsWith(CURRENT_PREFIX);
}

/** node's scrypt runs on the libuv thread pool (async form): the event loop keeps serving meanwhile. */
function scryptKey(password: string, salt: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(normalizePassword(password), salt, SCRYPT_KEY_BYTES, { ...SCRYPT_PARAMS, maxmem: SCRYPT_MAXMEM }, (err, key) => (err ? reject(err) : resolve(key)));
  });
}

async function verifyBetterAuthScrypt(passwordHash: string, password: string): Promise<boolean> {
  const [, salt, keyHex] = BETTER_AUTH_SCRYPT.exec(passwordHash)!;
  const expected = Buffer.from(keyHex!, "hex");
  const actual = await scryptKey(password, salt!);
  return timingSafeEqual(actual, expected);
}

/** argon2id (ours), or better-auth's scrypt for imported credentials; false for anything else. */
export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  try {
    if (isBetterAuthHash(passwordHash)) return await counted(() => verifyBetterAuthScrypt(passwordHash, password));
    return await counted(() => verify(passwordHash, normalizePassword(password)));
  } catch {
    return false;
  }
}

/** A well-formed scrypt hash no password matches (its key is not any password's): the cost of a verify, for nothing. */
const DUMMY_SCRYPT_HASH = `${"0".repeat(32)}:${"0".repeat(128)}`;

/** Burns the time of a better-auth scrypt verify (src/modules/email-password/legacy-hashes.ts). */
export async function burnScryptVerify(password: string): Promise<false> {
  await verifyPassword(DUMMY_SCRYPT_HASH, password);
  return false;
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
