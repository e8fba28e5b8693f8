#!/usr/bin/env node
// `npm test`: the whole suite on SQLite, then again on PostgreSQL when it answers.
// CI (CI=true) requires PostgreSQL: .ci/run starts it first.
import { spawnSync } from "node:child_process";
import pg from "pg";

const pgUrl = process.env.PORTCULLIS_TEST_PG_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const extra = process.argv.slice(2);

function vitest(env, label) {
  console.log(`\n=== ${label} ===`);
  const started = Date.now();
  const r = spawnSync("npx", ["vitest", "run", ...extra], { stdio: "inherit", env: { ...process.env, ...env } });
  console.log(`=== ${label}: ${((Date.now() - started) / 60_000).toFixed(1)} min ===`);
  return r.status ?? 1;
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

let status = vitest({ PORTCULLIS_TEST_DB: "sqlite" }, "SQLite");
if (await postgresAnswers()) {
  status = vitest({ PORTCULLIS_TEST_DB: "postgres", PORTCULLIS_TEST_PG_URL: pgUrl }, "PostgreSQL") || status;
} else if (process.env.CI) {
  console.error(`PostgreSQL does not answer at ${pgUrl}; CI requires it.`);
  status = 1;
} else {
  console.warn(`PostgreSQL does not answer at ${pgUrl}: skipped the PostgreSQL run.`);
}
process.exit(status);
