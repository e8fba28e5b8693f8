/** The two runs of a scenario side by side: differences, which ones the allowlist admits, a readable report. */
import { inspect } from "node:util";
import type { Allowed } from "./allowlist.ts";
import { ABSENT, differences, type Difference } from "./normalise.ts";
import type { StepRecord } from "./runner.ts";

export interface StepDifference extends Difference {
  step: string;
  /** The endpoint the step called (from whichever side reached it). */
  endpoint: string;
}

/** Steps are matched by name; a step only one side reached shows as `(step)`. */
export function compareRuns(betterAuth: StepRecord[], portcullis: StepRecord[]): StepDifference[] {
  const byName = (records: StepRecord[]) => new Map(records.map((r) => [r.step, r]));
  const a = byName(betterAuth);
  const b = byName(portcullis);
  const steps = [...new Set([...a.keys(), ...b.keys()])];
  return steps.flatMap((step): StepDifference[] => {
    const ra = a.get(step);
    const rb = b.get(step);
    const endpoint = ra?.endpoint ?? rb?.endpoint ?? "";
    if (!ra || !rb) return [{ step, endpoint, path: "(step)", betterAuth: ra ? "(ran)" : ABSENT, portcullis: rb ? "(ran)" : ABSENT }];
    const { step: _a, ...restA } = ra;
    const { step: _b, ...restB } = rb;
    return differences(restA, restB, "").map((d) => ({ ...d, step, endpoint, path: d.path.replace(/^\./, "") }));
  });
}

const matches = (pattern: string | RegExp, value: string) => (typeof pattern === "string" ? pattern === value : pattern.test(value));
const same = (expected: unknown, actual: unknown) => JSON.stringify(expected) === JSON.stringify(actual);

/** The allowlist entry that admits this difference, if any. */
export function allowedBy(list: Allowed[], scenario: string, d: StepDifference): Allowed | undefined {
  return list.find(
    (e) =>
      (e.endpoint === undefined || matches(e.endpoint, d.endpoint)) &&
      (e.scenario === undefined || matches(e.scenario, scenario)) &&
      (e.step === undefined || matches(e.step, d.step)) &&
      matches(e.path, d.path) &&
      (!("betterAuth" in e) || same(e.betterAuth, d.betterAuth)) &&
      (!("portcullis" in e) || same(e.portcullis, d.portcullis)),
  );
}

const show = (v: unknown) => inspect(v, { depth: 6, breakLength: 140, compact: 3 });

/** The failure message: each unexplained difference, then both records of the steps concerned. */
export function report(scenario: string, unexplained: StepDifference[], betterAuth: StepRecord[], portcullis: StepRecord[]): string {
  const lines = [`${unexplained.length} unexplained difference(s) in "${scenario}" (not in test/compat/allowlist.ts):`];
  for (const d of unexplained) {
    lines.push(`  step "${d.step}" (${d.endpoint}), at ${d.path}:`, `    better-auth: ${show(d.betterAuth)}`, `    portcullis:  ${show(d.portcullis)}`);
  }
  for (const step of [...new Set(unexplained.map((d) => d.step))]) {
    lines.push(`  -- step "${step}" in full:`);
    lines.push(`    better-auth: ${show(betterAuth.find((r) => r.step === step) ?? ABSENT)}`);
    lines.push(`    portcullis:  ${show(portcullis.find((r) => r.step === step) ?? ABSENT)}`);
  }
  return lines.join("\n");
}
