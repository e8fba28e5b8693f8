import fc from "fast-check";
import { describe, it } from "vitest";
import { routes, type Route } from "../../../rest-bridge/routes.ts";
import { testDialect } from "../../harness/database.ts";
import { property, runs, useFuzzServer } from "./fixture.ts";
import { authKind, bodyArb, extraHeaders, pathParam, procedures, queryString } from "./generators.ts";

/**
 * Hostile bodies, queries, headers, path parameters and methods on EVERY route of
 * rest-bridge/routes.ts (fixture.ts says what each answer must be).
 */
const fuzz = useFuzzServer("bridge routes");

function expandPath(route: Route, param: string): string {
  return route.path.replace(/:[A-Za-z_]+/g, param);
}

describe(`hostile input on every bridge route (${testDialect})`, () => {
  for (const route of routes) {
    it(`${route.method} ${route.path}`, async () => {
      fuzz.stats.targets += 1;
      const fields = procedures[route.procedure]?.fields ?? {};
      const arb = fc.record({
        auth: authKind,
        headers: extraHeaders,
        body: bodyArb(fields, fuzz.seed, route.form === true),
        query: queryString(fields, fuzz.seed),
        param: pathParam(fuzz.seed),
        wrongMethod: fc.integer({ min: 0, max: 9 }).map((n) => (n === 0 ? (route.method === "GET" ? "POST" : "GET") : n === 1 ? "PUT" : route.method)),
      });
      await property(
        fc.asyncProperty(arb, async (a) => {
          const path = `/api/auth${expandPath(route, a.param)}`;
          const withQuery = route.input === "query" || a.query.length % 4 === 0 ? `${path}?${a.query}` : path;
          await fuzz.check({ method: a.wrongMethod, path: withQuery, body: a.body.body, contentType: a.body.contentType, auth: a.auth, headers: a.headers }, "rest");
        }),
        runs(route.input === "none" ? 12 : 30),
      );
    }, 300_000);
  }
});
