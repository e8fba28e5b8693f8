import { describe, expect, it } from "vitest";
import { createAead, deriveKey, keyId, keyringFromSecrets } from "../../crypto/aead.ts";
import { openTokens, resealKept, sealTokens } from "./tokens.ts";

const A = "secret-A-secret-A-secret-A-secret-A-0001";
const B = "secret-B-secret-B-secret-B-secret-B-0002";

describe("resealKept (secret rotation)", () => {
  it("re-seals the stored refresh and id tokens a refresh answer did not replace, under the newest key", () => {
    const underA = createAead(keyringFromSecrets([A]));
    const rotated = createAead(keyringFromSecrets([B, A]));
    const now = new Date("2026-11-24T00:00:00Z");
    const first = { accessToken: "at-1", refreshToken: "rt-1", idToken: "id-1", expiresInSec: 3600, refreshTokenExpiresInSec: null, scope: null };
    const sealed = sealTokens(underA, "acc-1", first, "openid", now);
    const stored = { id: "acc-1", accessToken: sealed.accessToken ?? null, refreshToken: sealed.refreshToken ?? null, idToken: sealed.idToken ?? null };
    const opened = openTokens(rotated, stored);

    const refresh = { accessToken: "at-2", refreshToken: null, idToken: null, expiresInSec: 3600, refreshTokenExpiresInSec: null, scope: null };
    const written = { ...stored, accessToken: sealTokens(rotated, "acc-1", refresh, "openid", now).accessToken, ...resealKept(rotated, "acc-1", refresh, opened) };
    for (const envelope of [written.accessToken, written.refreshToken, written.idToken]) expect(envelope?.startsWith(`k${keyId(deriveKey(B))}.`)).toBe(true);
    expect(openTokens(createAead(keyringFromSecrets([B])), written)).toEqual({ accessToken: "at-2", refreshToken: "rt-1", idToken: "id-1" });

    // Fresh tokens in the answer: nothing kept to re-seal.
    expect(resealKept(rotated, "acc-1", { ...refresh, refreshToken: "rt-2", idToken: "id-2" }, opened)).toEqual({});
  });
});
