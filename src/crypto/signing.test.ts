import { describe, expect, it } from "vitest";
import { sign, verify } from "./signing.ts";

describe("signed values", () => {
  const secret = "a-service-secret-of-at-least-32-chars!";

  it("verify answers the value signed with one of the secrets", () => {
    const signed = sign("abc.def", secret);
    expect(signed).toMatch(/^abc\.def\.[A-Za-z0-9_-]{43}$/);
    expect(verify(signed, [secret])).toBe("abc.def");
    // Rotation: a value signed under the older secret still verifies while it is listed.
    expect(verify(signed, ["the-newer-secret-of-at-least-32-chars", secret])).toBe("abc.def");
  });

  it("refuses a tampered value or signature, another secret, or no signature", () => {
    const signed = sign("value", secret);
    expect(verify(`other${signed.slice(5)}`, [secret])).toBeNull();
    expect(verify(`${signed.slice(0, -1)}${signed.endsWith("A") ? "B" : "A"}`, [secret])).toBeNull();
    expect(verify(signed, ["another-secret-of-at-least-32-characters"])).toBeNull();
    expect(verify(signed, [])).toBeNull();
    expect(verify("value", [secret])).toBeNull();
    expect(verify("", [secret])).toBeNull();
  });
});
