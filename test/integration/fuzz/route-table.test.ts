import { describe, expect, it } from "vitest";
import { routes } from "../../../rest-bridge/routes.ts";
import { testDialect } from "../../harness/database.ts";
import { raw, useFuzzServer } from "./fixture.ts";
import { procedures } from "./generators.ts";

/** The table the fuzzer walks: every route has its procedure, and Node's own head-size refusal. */
const fuzz = useFuzzServer("route table");

describe(`the route table (${testDialect})`, () => {
  it("every route calls a procedure the router has", () => {
    expect(routes.filter((r) => !procedures[r.procedure]).map((r) => `${r.method} ${r.path} → ${r.procedure}`)).toEqual([]);
  });

  it("a request head over Node's 16 KiB limit is refused with 431 at once (no hang, no 5xx)", async () => {
    const res = await raw("GET", `${fuzz.server.auth}/get-session?x=${"a".repeat(20_000)}`);
    fuzz.stats.cases += 1;
    expect(res.status).toBe(431);
  });
});
