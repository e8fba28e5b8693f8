import { scryptSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { hashesInFlight, hashPassword, isBetterAuthHash, needsRehash, verifyPassword } from "./password.ts";

/** The format better-auth 1.6 writes (@better-auth/utils/password), built independently here. */
function betterAuthStyleHash(password: string, salt = "0123456789abcdef0123456789abcdef"): string {
  const key = scryptSync(password.normalize("NFKC"), salt, 64, { N: 16384, r: 16, p: 1, maxmem: 64 * 1024 * 1024 });
  return `${salt}:${key.toString("hex")}`;
}

describe("password hashes", () => {
  it("writes argon2id with the OWASP parameters, which need no re-hash", async () => {
    const h = await hashPassword("correct horse");
    expect(h).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$/);
    expect(needsRehash(h)).toBe(false);
    expect(await verifyPassword(h, "correct horse")).toBe(true);
    expect(await verifyPassword(h, "correct horsE")).toBe(false);
  });

  it("verifies better-auth's scrypt hashes (NFKC, the salt as hex text) and marks them for re-hashing", async () => {
    const h = betterAuthStyleHash("ｐａｓｓｗｏｒｄ-1");
    expect(isBetterAuthHash(h)).toBe(true);
    expect(needsRehash(h)).toBe(true);
    expect(await verifyPassword(h, "password-1")).toBe(true); // NFKC folds the full-width letters
    expect(await verifyPassword(h, "password-2")).toBe(false);
  });

  it("refuses malformed or foreign hashes instead of throwing", async () => {
    expect(await verifyPassword("abc:def", "x")).toBe(false);
    expect(await verifyPassword("$2b$10$abcdefghijklmnopqrstuu", "x")).toBe(false);
    expect(isBetterAuthHash(`${"a".repeat(32)}:${"b".repeat(127)}`)).toBe(false);
  });

  it("older argon2 parameters are upgraded too", () => {
    expect(needsRehash("$argon2id$v=19$m=4096,t=3,p=1$c2FsdHNhbHQ$aGFzaA")).toBe(true);
  });

  it("counts the hashes in flight (GET /metrics), a failed verify too", async () => {
    const h = await hashPassword("counted password");
    expect(hashesInFlight()).toBe(0);
    // A malformed hash fails inside the count: it must leave it like a success does.
    const jobs = Array.from({ length: 6 }, (_, i) =>
      i % 2 ? verifyPassword(h, "counted password") : verifyPassword("$argon2id$v=19$m=19456,t=2,p=1$broken", "x"),
    );
    await Promise.resolve();
    expect(hashesInFlight()).toBe(6);
    expect(await Promise.all(jobs)).toEqual([false, true, false, true, false, true]);
    expect(hashesInFlight()).toBe(0);
  });
});
