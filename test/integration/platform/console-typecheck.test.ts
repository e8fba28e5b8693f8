import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The admin console (console/, docs/admin-console.md) calls the service only through
 * portcullis/client's typed router: its sources type-check against the current router, so a
 * renamed procedure or field fails here, without a browser or a database (the SQLite pass only,
 * vitest.config.ts).
 */
describe("the console's sources", () => {
  it("type-check against the service's router through portcullis/client (a renamed procedure or field fails here)", () => {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    const project = fileURLToPath(new URL("../../../console/tsconfig.json", import.meta.url));
    const result = spawnSync(process.execPath, [tsc, "-p", project], { encoding: "utf8" });
    expect(result.stdout + result.stderr).toBe("");
    expect(result.status).toBe(0);
  }, 120_000);
});
