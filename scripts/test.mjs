#!/usr/bin/env node
// `npm test`: the whole suite on SQLite and, when PostgreSQL answers, again on PostgreSQL; the two
// passes run side by side (each file waits on its servers, browsers and child processes for much
// of its time, so two passes fill the cores that one leaves idle). Each line of a pass's output is
// prefixed with its dialect. CI (CI=true) requires PostgreSQL: .ci/run starts it first.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import pg from "pg";
import { ensureBuilt } from "./build.mjs";

const pgUrl = process.env.PORTCULLIS_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const extra = process.argv.slice(2);

/** One vitest run; resolves to its exit status. Output lines carry `label`. */
function vitest(env, label) {
  const started = Date.now();
  const child = spawn("npx", ["vitest", "run", ...extra], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });
  for (const [stream, out] of [[child.stdout, process.stdout], [child.stderr, process.stderr]]) {
    createInterface({ input: stream, crlfDelay: Infinity }).on("line", (line) => out.write(`[${label}] ${line}\n`));
  }
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      console.log(`=== ${label}: ${((Date.now() - started) / 60_000).toFixed(1)} min, ${code === 0 ? "passed" : `failed (${signal ?? code})`} ===`);
      resolve(code ?? 1);
    });
  });
}

async function postgresAnswers() {
  const client = new pg.Client({ connectionString: pgUrl, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

// dist/ once, before either pass (each pass's global setup would otherwise build it at the same time).
ensureBuilt();
const started = Date.now();
const passes = [vitest({ PORTCULLIS_TEST_DB: "sqlite" }, "sqlite")];
let status = 0;
if (await postgresAnswers()) {
  passes.push(vitest({ PORTCULLIS_TEST_DB: "postgres", PORTCULLIS_TEST_PG_URL: pgUrl }, "postgres"));
} else if (process.env.CI) {
  console.error(`PostgreSQL does not answer at ${pgUrl}; CI requires it.`);
  status = 1;
} else {
  console.warn(`PostgreSQL does not answer at ${pgUrl}: only the SQLite pass runs.`);
}
for (const s of await Promise.all(passes)) status ||= s;
console.log(`=== npm test: ${((Date.now() - started) / 60_000).toFixed(1)} min in all ===`);
process.exit(status);
