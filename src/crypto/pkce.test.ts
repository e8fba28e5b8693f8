import { describe, expect, it } from "vitest";
import { codeChallengeS256, createCodeVerifier } from "./pkce.ts";

describe("PKCE (RFC 7636)", () => {
  it("matches the S256 example of RFC 7636 Appendix B", () => {
    expect(codeChallengeS256("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")).toBe("E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM");
  });

  it("makes fresh 43-character verifiers of unreserved characters (§4.1)", () => {
    const a = createCodeVerifier();
    const b = createCodeVerifier();
    expect(a).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(a).not.toBe(b);
  });
});
