import { describe, expect, it } from "vitest";
import { randomToken } from "./tokens.ts";

describe("randomToken", () => {
  it("gives base64url tokens of the asked size, all different, across many refills of its entropy", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      // Mixed sizes so that slices straddle the end of the 4 KiB block.
      const size = i % 3 === 0 ? 16 : 32;
      const token = randomToken(size);
      expect(Buffer.from(token, "base64url").length).toBe(size);
      expect(token).toMatch(/^[A-Za-z0-9_-]+$/);
      seen.add(token);
    }
    expect(seen.size).toBe(2000);
  });

  it("never hands out zeroed (already used) entropy", () => {
    const zero16 = Buffer.alloc(16).toString("base64url");
    for (let i = 0; i < 1000; i++) expect(randomToken(16)).not.toBe(zero16);
  });

  it("refuses more than one block at once", () => {
    expect(() => randomToken(8192)).toThrow(RangeError);
  });
});
