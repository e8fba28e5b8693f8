import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { property, raw, runs, useFuzzServer } from "./fixture.ts";
import { caseMask, flipCase, NFKC_VARIANTS, VICTIM_PASSWORD } from "./generators.ts";

/** An email in any case and a password in any Unicode normal form are the same account (NFKC). */
const fuzz = useFuzzServer("unicode");

describe(`unicode equivalence (${testDialect})`, () => {
  it("sign-in takes the email in any case and the password in any Unicode normal form (NFKC)", async () => {
    fuzz.stats.targets += 1;
    const email = `Nfkc.${Date.now().toString(36)}@Example.Test`;
    const up = await raw("POST", `${fuzz.server.auth}/sign-up/email`, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "N", email, password: VICTIM_PASSWORD }),
    });
    expect(up.status, up.text).toBe(200);
    await property(
      fc.asyncProperty(caseMask, fc.constantFrom(...NFKC_VARIANTS), async (mask, password) => {
        const res = await raw("POST", `${fuzz.server.auth}/sign-in/email`, {
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ email: flipCase(email, mask), password }),
        });
        fuzz.stats.cases += 1;
        expect(res.status, res.text).toBe(200);
        expect(res.body.user.email).toBe(email.toLowerCase());
      }),
      runs(12),
    );
    // a sign-up with the same email in another case is the same user: 409, and no second row
    const again = await raw("POST", `${fuzz.server.auth}/sign-up/email`, {
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "N", email: email.toUpperCase(), password: "another-password" }),
    });
    fuzz.stats.cases += 1;
    expect(again.status, again.text).toBe(409);
    expect(again.body.code).toBe("USER_ALREADY_EXISTS");
  }, 120_000);
});
