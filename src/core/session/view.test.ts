import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { SessionWithUser } from "../../db/session-store/index.ts";
import { isoString, sessionBody, sessionJson } from "./view.ts";

/** The written answer must be byte for byte what JSON.stringify makes of the body object the tRPC procedures return. */
describe("get-session serialization", () => {
  it("isoString equals toISOString over the whole range, at day, year and leap-year edges", () => {
    const edges = [
      0, 1, 999, 86_399_999, 86_400_000, 951_782_400_000 /* 2000-02-29 */, 4_107_542_400_000 /* 2100-03-01 */,
      253_402_300_799_999, 253_402_300_800_000, -1, -86_400_001, 8.64e15, -8.64e15,
    ];
    for (const ms of edges) expect(isoString(ms)).toBe(new Date(ms).toISOString());
    fc.assert(fc.property(fc.integer({ min: -8.64e15, max: 8.64e15 }), (ms) => isoString(ms) === new Date(ms).toISOString()), { numRuns: 20_000 });
    fc.assert(fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => isoString(ms) === new Date(ms).toISOString()), { numRuns: 20_000 });
    expect(() => isoString(Number.NaN)).toThrow(RangeError);
  });

  it("sessionJson equals JSON.stringify of the body, whatever the strings and nulls hold", () => {
    const text = fc.string({ unit: "binary", maxLength: 40 });
    const optText = fc.option(text, { nil: null });
    const date = fc.date({ min: new Date(0), max: new Date(253_402_300_799_999), noInvalidDate: true });
    const value: fc.Arbitrary<SessionWithUser> = fc.record({
      session: fc.record({
        id: text, userId: text, expiresAt: date, rememberMe: fc.boolean(), ipAddress: optText, userAgent: optText,
        impersonatedBy: optText, createdAt: date, updatedAt: date, activeOrganizationId: optText, activeTeamId: optText,
      }),
      user: fc.record({
        id: text, name: text, email: text, emailVerified: fc.boolean(), image: optText, username: optText,
        displayUsername: optText, role: text, banned: fc.boolean(), banReason: optText,
        banExpires: fc.option(date, { nil: null }), twoFactorEnabled: fc.boolean(), createdAt: date, updatedAt: date,
      }),
    });
    fc.assert(
      fc.property(value, text, (v, token) => {
        const json = sessionJson(v, token);
        expect(json).toBe(JSON.stringify(sessionBody(v, token)));
        expect(JSON.parse(json)).toEqual(sessionBody(v, token));
      }),
      { numRuns: 5_000 },
    );
  });
});
