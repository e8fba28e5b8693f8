import fc from "fast-check";
import { describe, it } from "vitest";
import { routes } from "../../../rest-bridge/routes.ts";
import { testDialect } from "../../harness/database.ts";
import { property, runs, useFuzzServer } from "./fixture.ts";
import { authKind, contentTypes, enc, extraHeaders, hostileValue, procedures, toJson } from "./generators.ts";

/** Paths that are no route, odd methods, batching and broken encodings below /api/auth and /api/trpc. */
const fuzz = useFuzzServer("paths and methods");

describe(`hostile paths and methods (${testDialect})`, () => {
  it("random paths below /api/auth and /api/trpc, odd methods, batching, encodings", async () => {
    fuzz.stats.targets += 1;
    const segment = fc.oneof(
      fc.constantFrom(...routes.map((r) => r.path.slice(1)), ...Object.keys(procedures)),
      fc.string({ maxLength: 12 }).map(enc),
      fc.constantFrom("", "..", ".", "%2e%2e", "%", "%ZZ", "%00", "a,b", "__proto__", "constructor", ";", "x".repeat(2000)),
    );
    const arb = fc.record({
      method: fc.constantFrom("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD"),
      prefix: fc.constantFrom("/api/auth", "/api/auth/", "/api/trpc", "/api/trpc/", "/api//auth", "/API/AUTH", ""),
      segments: fc.array(segment, { minLength: 0, maxLength: 4 }),
      query: fc.constantFrom("", "?batch=1", "?batch=1&input={}", "?input=%7B", "?input=[1,2]", "?__proto__[a]=1", "?%"),
      body: fc.oneof(fc.constant(undefined), fc.string({ maxLength: 30 }), hostileValue.map(toJson)),
      contentType: contentTypes,
      auth: authKind,
      headers: extraHeaders,
    });
    await property(
      fc.asyncProperty(arb, async (a) => {
        const path = `${a.prefix}${a.segments.length ? `/${a.segments.join("/")}` : ""}${a.query}`.replace(/^(?!\/)/, "/");
        await fuzz.check({ method: a.method, path, body: a.body, contentType: a.contentType, auth: a.auth, headers: a.headers }, "any");
      }),
      runs(250),
    );
  }, 300_000);
});
