import { describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { raw, useFuzzServer } from "./fixture.ts";

const fuzz = useFuzzServer("regressions");

/** Cases the fuzzer found (each was a 500), kept as plain examples. */
describe(`regressions found by the fuzzer (${testDialect})`, () => {
  const json = { "content-type": "application/json" };

  it("the database digest the fuzz files compare is stable, and notices a one-column write", async () => {
    const token = await fuzz.liveToken("user");
    const before = await fuzz.digester.digest();
    expect(await fuzz.digester.digest()).toBe(before);
    const changed = await raw("POST", `${fuzz.server.auth}/update-user`, { headers: { ...json, authorization: `Bearer ${token}` }, body: JSON.stringify({ name: `Renamed ${Date.now()}` }) });
    expect(changed.status, changed.text).toBe(200);
    expect(await fuzz.digester.digest()).not.toBe(before);
  });

  it("a malformed escape in a path parameter (/reset-password/%ZZ) is a 404, not a 500", async () => {
    const res = await raw("GET", `${fuzz.server.auth}/reset-password/%ZZ`);
    expect(res.status, res.text).toBe(404);
    expect(res.body.code).toBe("NOT_FOUND");
  });

  it("revoke-session with an id that is not a UUID revokes nothing (PostgreSQL rejected the cast: 500)", async () => {
    const token = await fuzz.liveToken("user");
    const res = await raw("POST", `${fuzz.server.auth}/revoke-session`, { headers: { ...json, authorization: `Bearer ${token}` }, body: JSON.stringify({ id: "not-a-uuid\u000f" }) });
    expect(res.status, res.text).toBe(200);
    expect((await raw("GET", `${fuzz.server.auth}/get-session`, { headers: { authorization: `Bearer ${token}` } })).body?.session).toBeTruthy();
  });

  it("NUL characters in stored text are a 400 on PostgreSQL (which refuses them), never a 500, and change nothing", async () => {
    const token = await fuzz.liveToken("user");
    const cases: [string, unknown, Record<string, string>][] = [
      ["/sign-up/email", { name: "a\u0000b", email: `nul.${Date.now()}@example.test`, password: "password123" }, {}],
      ["/update-user", { name: "x\u0000y" }, { authorization: `Bearer ${token}` }],
      ["/device/code", { client_id: "c\u0000", scope: "s\u0000" }, {}],
    ];
    for (const [path, body, headers] of cases) {
      const before = await fuzz.digester.digest();
      const res = await raw("POST", `${fuzz.server.auth}${path}`, { headers: { ...json, ...headers }, body: JSON.stringify(body) });
      fuzz.stats.cases += 1;
      expect(res.status, `${path}: ${res.text}`).toBeLessThan(500);
      if (res.status >= 400) {
        expect(res.body).toMatchObject({ code: "VALIDATION_ERROR", message: expect.stringContaining("NUL") });
        expect(await fuzz.digester.digest()).toBe(before);
      }
      if (testDialect === "postgres") expect(res.status, path).toBe(400);
    }
  });

  it("a request target starting with // is a path (404), not a host that fails to parse (500)", async () => {
    for (const target of ["//%7Bx%7Cy/;/z?batch=1", "//api/auth/ok", "//[::1/x"]) {
      const res = await fuzz.rawTarget("PUT", target);
      expect(res.status, target).toBe(404);
    }
  });

  it("tRPC errors raised before a procedure runs (batching off, unknown path) are JSON", async () => {
    const res = await raw("GET", `${fuzz.server.url}/api/trpc/ok,ok?batch=1&input={}`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body.error.data.authCode).toBe("VALIDATION_ERROR");
  });
});
