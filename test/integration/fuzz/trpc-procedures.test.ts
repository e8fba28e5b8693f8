import fc from "fast-check";
import { describe, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { property, runs, useFuzzServer } from "./fixture.ts";
import { authKind, bodyArb, enc, extraHeaders, procedures } from "./generators.ts";

/**
 * Hostile input on /api/trpc/<EVERY procedure> of the router, queries and mutations (fixture.ts
 * says what each answer must be).
 */
const fuzz = useFuzzServer("tRPC procedures");

describe(`hostile input on every tRPC procedure (${testDialect})`, () => {
  for (const [name, proc] of Object.entries(procedures)) {
    it(`/api/trpc/${name} (${proc.type})`, async () => {
      fuzz.stats.targets += 1;
      const arb = fc.record({
        auth: authKind,
        headers: extraHeaders,
        body: bodyArb(proc.fields, fuzz.seed, false),
        inputInQuery: fc.boolean(),
      });
      await property(
        fc.asyncProperty(arb, async (a) => {
          const path = `/api/trpc/${name}`;
          if (proc.type === "query") {
            const input = a.body.body === undefined ? "" : `?input=${enc(a.body.body).slice(0, 6000)}`;
            await fuzz.check({ method: "GET", path: `${path}${input}`, auth: a.auth, headers: a.headers }, "trpc");
          } else {
            const query = a.inputInQuery && a.body.body ? `?input=${enc(a.body.body).slice(0, 2000)}` : "";
            await fuzz.check({ method: "POST", path: `${path}${query}`, body: a.body.body, contentType: a.body.contentType, auth: a.auth, headers: a.headers }, "trpc");
          }
        }),
        runs(Object.keys(proc.fields).length === 0 ? 8 : 20),
      );
    }, 300_000);
  }
});
