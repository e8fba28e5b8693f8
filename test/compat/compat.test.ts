/**
 * Differential compatibility test (docs/wire-contract.md §10): one scenario list, run against an
 * in-process better-auth 1.6 and against Portcullis, both driven by the official
 * `better-auth/client`. What the client sees must be the same on both, except for the
 * differences allowlist.ts admits, each with the CONTRACT section behind it.
 */
import { appendFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOidcProvider, type TestOidcProvider } from "../harness/oidc.ts";
import { allowlist, variants, type Allowed } from "./allowlist.ts";
import { startBetterAuth } from "./better-auth-target.ts";
import { allowedBy, compareRuns, report } from "./compare.ts";
import { startPortcullis } from "./portcullis-target.ts";
import { Run } from "./runner.ts";
import { scenarios } from "./scenarios.ts";
import { BASE_PATH, freePort, type Target } from "./targets.ts";

let oidc: TestOidcProvider;
let betterAuth: Target;
let portcullis: Target;

const used = new Set<Allowed>();
const tally = { identical: 0, allowed: 0, failed: 0 };

beforeAll(async () => {
  const [baPort, pcPort] = [await freePort(), await freePort()];
  const redirectUris = [baPort, pcPort].flatMap((port) =>
    ["oidc", "google"].map((provider) => `http://127.0.0.1:${port}${BASE_PATH}/callback/${provider}`),
  );
  oidc = await startOidcProvider({ redirectUris });
  betterAuth = await startBetterAuth(baPort, oidc);
  portcullis = await startPortcullis(pcPort, oidc);
});

afterAll(async () => {
  const total = tally.identical + tally.allowed + tally.failed;
  console.log(`compat: ${total} scenarios, ${tally.identical} identical, ${tally.allowed} allowed differences`);
  if (tally.failed > 0) console.log(`compat: ${tally.failed} scenarios with unexplained differences`);
  await portcullis?.close();
  await betterAuth?.close();
  await oidc?.close();
});

describe("better-auth 1.6 vs Portcullis, through better-auth/client", () => {
  scenarios.forEach((scenario, index) => {
    it(scenario.name, async () => {
      const tag = `c${index + 1}`;
      const reference = new Run(betterAuth, oidc, tag);
      await reference.execute(scenario);
      const ours = new Run(portcullis, oidc, tag);
      await ours.execute(scenario);

      // The reference run must go to its end: an abort there is a defect of the scenario.
      const referenceAbort = reference.records.find((r) => r.step === "(aborted)");
      if (referenceAbort) {
        tally.failed += 1;
        expect.fail(`the better-auth run aborted (a defect of the scenario): ${String(referenceAbort.body)}`);
      }
      const diffs = compareRuns(reference.records, ours.records);
      const unexplained = diffs.filter((d) => {
        const entry = allowedBy(allowlist, scenario.name, d);
        if (entry) used.add(entry);
        return !entry;
      });
      // COMPAT_REPORT=<file>: one JSON line per scenario, its unexplained differences and both runs' records (for triage).
      if (process.env.COMPAT_REPORT) {
        const line = { scenario: scenario.name, unexplained, betterAuth: reference.records, portcullis: ours.records };
        appendFileSync(process.env.COMPAT_REPORT, `${JSON.stringify(line)}\n`);
      }
      if (unexplained.length > 0) {
        tally.failed += 1;
        expect.fail(report(scenario.name, unexplained, reference.records, ours.records));
      }
      if (diffs.length === 0) tally.identical += 1;
      else tally.allowed += 1;
    });
  });

  it("allowlist: every entry cites a CONTRACT section and still admits a difference", () => {
    for (const entry of allowlist) {
      expect(entry.contract, String(entry.path)).toMatch(/^§([1-9]|10)\b/);
      // Narrow by construction: an endpoint, or a scenario and one of its steps.
      expect(entry.endpoint !== undefined || (entry.scenario !== undefined && entry.step !== undefined), entry.contract).toBe(true);
    }
    // Every better-auth variant a scenario asks for is explained next to the allowlist.
    for (const scenario of scenarios) {
      for (const key of Object.keys(scenario.variant ?? {})) expect(Object.keys(variants), scenario.name).toContain(key);
    }
    const stale = allowlist.filter((e) => !used.has(e));
    expect(stale, "entries that admitted nothing in this run: remove them").toEqual([]);
  });
});
