/**
 * The shape of the sources is kept by CI, not by memory (docs/architecture.md "How to check it"):
 * no import cycle, no import from one family folder into another outside the allowed arrows,
 * nothing below the families importing one, no production file over the size limit, session
 * cache eviction and session writes only in the session core, no cross-cutting rule applied by
 * hand, no citation a reader of the repository cannot follow. The checker itself is shown to fail
 * on what each check looks for.
 */
import { describe, expect, it } from "vitest";
import { routes } from "../../../rest-bridge/routes.ts";
import { routeAccess } from "../../../scripts/docs/routes-doc.ts";
import {
  ALLOWED_FAMILY_ARROWS, cycles, familyImports, forbiddenFamilyImports, isDeclarationLeaf, leafImports, linesMatching, longFiles, MAX_LINES, report, SESSION_WRITE, sitesOutside, sources, textFiles, UNSHIPPED_CITATION, upwardImports,
  type SourceFile,
} from "../../../scripts/architecture.ts";

const file = (path: string, imports: string[], text = ""): SourceFile => ({ path, imports, text });

describe("the architecture", () => {
  const files = sources();

  it("reads the whole service", () => {
    expect(files.length).toBeGreaterThan(150);
    expect(files.some((f) => f.path === "src/core/index.ts")).toBe(true);
    expect(files.some((f) => f.path.endsWith(".test.ts"))).toBe(false);
  });

  it("has no import cycle", () => {
    expect(cycles(files)).toEqual([]);
  });

  it("families import core and trpc, never each other (beyond the allowed arrows)", () => {
    expect(forbiddenFamilyImports(files)).toEqual([]);
    expect(ALLOWED_FAMILY_ARROWS.length).toBeLessThanOrEqual(5);
    // Every allowed arrow is still used: the list says what is true today.
    const used = new Set(familyImports(files).map((i) => i.arrow));
    expect(ALLOWED_FAMILY_ARROWS.filter((a) => !used.has(a))).toEqual([]);
  });

  it("nothing below the families imports one (core, db, crypto, mail, config, ...), but their config sections and error tables, which stay leaves", () => {
    expect(upwardImports(files)).toEqual([]);
    expect(leafImports(files)).toEqual([]);
    expect(files.filter((f) => isDeclarationLeaf(f.path)).length).toBeGreaterThan(10);
  });

  it(`has no production file over ${MAX_LINES} lines`, () => {
    expect(longFiles(files)).toEqual([]);
  });

  it("evicts the session cache and writes sessions only in the session core, and applies no guard by hand", () => {
    const r = report(files);
    expect(r.evictionSites).toEqual([]);
    expect(r.sessionWrites).toEqual([]);
    expect(r.handAppliedGuards).toEqual([]);
  });

  it("cites what ships: no comment or text of the sources, tests, bench or scripts points at the team's notes outside the repository or at an issue", () => {
    const all = textFiles();
    expect(all.some((f) => f.path.startsWith("test/compat/")) && all.some((f) => f.path.startsWith("console/src/"))).toBe(true);
    expect(linesMatching(all, UNSHIPPED_CITATION)).toEqual([]);
  });

  it("every route's procedure comes from a builder of src/trpc/init.ts, which says who may call it", () => {
    for (const route of routes) expect(routeAccess(route.procedure), route.path).toMatch(/^(anyone|a session|the user's own session)/);
    expect(() => routeAccess("no.such.procedure")).toThrow("no access meta");
  });

  it("the checks fail on what they look for", () => {
    const loop = [file("src/a.ts", ["src/b.ts"]), file("src/b.ts", ["src/c.ts"]), file("src/c.ts", ["src/a.ts"]), file("src/d.ts", ["src/a.ts"])];
    expect(cycles(loop)).toEqual([["src/a.ts", "src/b.ts", "src/c.ts"]]);
    const arrow = [file("src/modules/x/x.router.ts", ["src/modules/y/y.service.ts", "src/core/index.ts"]), file("src/modules/y/y.service.ts", [])];
    expect(forbiddenFamilyImports(arrow, [])).toEqual([{ arrow: "x -> y", file: "src/modules/x/x.router.ts", target: "src/modules/y/y.service.ts" }]);
    expect(forbiddenFamilyImports(arrow, ["x -> y"])).toEqual([]);
    expect(upwardImports([file("src/core/holdings.ts", ["src/modules/two-factor/index.ts"])])).toHaveLength(1);
    expect(upwardImports([file("src/config/schema.ts", ["src/modules/two-factor/two-factor.config.ts"])])).toHaveLength(0);
    expect(leafImports([file("src/modules/two-factor/two-factor.config.ts", ["src/modules/two-factor/totp.ts"])])).toHaveLength(1);
    expect(longFiles([file("src/x.ts", [], "a\n".repeat(MAX_LINES + 1))])).toEqual([{ path: "src/x.ts", lines: MAX_LINES + 1 }]);
    expect(sitesOutside([file("src/modules/x/y.ts", [], "  app.sessionCache.evictUser(id);\n")], /sessionCache\.evict/, () => false)).toEqual(["src/modules/x/y.ts:1"]);
    const writes = file("src/modules/x/y.ts", [], "  await app.sessions.insertSessionUnlessBanned(row, now, app.orm);\n  await tx.nativeDelete(Session, { id });\n  await tx.nativeDelete(SessionLog, { id });\n");
    expect(sitesOutside([writes], SESSION_WRITE, () => false)).toEqual(["src/modules/x/y.ts:1", "src/modules/x/y.ts:2"]);
    const cited = ["// see " + "CONTRACT" + ".md §3", "// RFC 6749 §5.2, docs/wire-contract.md §3", " * as issue " + "27 asked", "// (" + "#14) lever 5", "// issue a token"];
    expect(linesMatching([file("src/x.ts", [], cited.join("\n"))], UNSHIPPED_CITATION)).toEqual(["src/x.ts:1", "src/x.ts:3", "src/x.ts:4"]);
  });
});
