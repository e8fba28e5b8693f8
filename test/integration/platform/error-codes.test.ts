/**
 * Error codes are part of the wire contract (docs/errors.md): each family owns its table and
 * src/errors.ts composes them. A code declared in two tables does not compile and fails at start;
 * a code once shipped is never renamed or removed (test/fixtures/error-codes.txt lists every
 * code so far: new codes are appended there, none leaves).
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { composeErrors, ERROR_TABLES, ERRORS } from "../../../src/errors.ts";

describe("error codes", () => {
  it("no shipped code is renamed or removed", () => {
    const shipped = readFileSync(join(import.meta.dirname, "../../fixtures/error-codes.txt"), "utf8").split("\n").filter(Boolean);
    expect(shipped.length).toBeGreaterThan(100);
    expect(shipped.filter((code) => !Object.hasOwn(ERRORS, code))).toEqual([]);
  });

  it("every code is in exactly one table, and the composed table is their union", () => {
    const counts = new Map<string, number>();
    for (const table of Object.values(ERROR_TABLES)) for (const code of Object.keys(table)) counts.set(code, (counts.get(code) ?? 0) + 1);
    expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
    expect([...counts.keys()].sort()).toEqual(Object.keys(ERRORS).sort());
  });

  it("a code declared twice fails, at compile time and at run time", () => {
    const a = { SAME_CODE: [400, "a"] } as const;
    const b = { SAME_CODE: [401, "b"] } as const;
    // @ts-expect-error two tables declare SAME_CODE
    expect(() => composeErrors(a, b)).toThrow("error code SAME_CODE is declared twice");
    expect(composeErrors(a, { OTHER_CODE: [400, "c"] } as const)).toEqual({ SAME_CODE: [400, "a"], OTHER_CODE: [400, "c"] });
  });
});
