import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { unsignBetterAuthToken } from "./better-auth-token.ts";

const secret = "better-auth-secret-better-auth-secret-0123";
const token = "fgMppm0Ywwffye3scIKor9EKTYjUAIm8";
const signature = createHmac("sha256", secret).update(token).digest("base64");

describe("better-auth signed session tokens", () => {
  it("unsigns `token.signature` under any configured secret, URL-encoded or not", () => {
    expect(unsignBetterAuthToken(`${token}.${signature}`, ["x".repeat(32), secret])).toBe(token);
    expect(unsignBetterAuthToken(encodeURIComponent(`${token}.${signature}`), [secret])).toBe(token);
    const url = signature.replace(/\+/g, "-").replace(/\//g, "_").replace(/=$/, "");
    expect(unsignBetterAuthToken(`${token}.${url}`, [secret])).toBe(token);
  });

  it("leaves a wrong signature, another secret's, our tokens and revocation handles as they are", () => {
    const wrong = `${token}.${createHmac("sha256", "another").update(token).digest("base64")}`;
    expect(unsignBetterAuthToken(wrong, [secret])).toBe(wrong);
    expect(unsignBetterAuthToken("A".repeat(43), [secret])).toBe("A".repeat(43));
    const handle = `sh.0d2c4b1e-5a7e-4f0e-9a43-0a1b2c3d4e5f.${"a".repeat(43)}`;
    expect(unsignBetterAuthToken(handle, [secret])).toBe(handle);
    expect(unsignBetterAuthToken(`${token}.%E0%A4%A`, [secret])).toBe(`${token}.%E0%A4%A`);
  });
});
