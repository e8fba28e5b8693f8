// Before any test file: dist/ up to date, since the CLI tests run bin/portcullis.cjs as an
// operator would (compiled). Once here, never from several test workers at the same time.
// Then one migrated template database for the run's dialect, which test servers start from
// (test/harness/database.ts) instead of applying every migration again: a PostgreSQL database
// created and migrated costs about two seconds on a loaded machine, and a run starts hundreds.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
// @ts-expect-error plain ESM script without types
import { ensureBuilt } from "../scripts/build.mjs";
import { databaseShape, POSTGRES_ADMIN_URL, testDialect, withAdmin, type MigratedTemplate } from "./harness/database.ts";

declare module "vitest" {
  export interface ProvidedContext {
    migratedTemplate: MigratedTemplate;
  }
}

function migrate(databaseUrl: string): void {
  const r = spawnSync(process.execPath, ["bin/portcullis.cjs", "migrate"], { env: { ...process.env, DATABASE_URL: databaseUrl }, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`migrating the test template failed:\n${r.stdout}\n${r.stderr}`);
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  ensureBuilt();
  const name = `pc_tpl_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
  if (testDialect === "sqlite") {
    const file = join(tmpdir(), `${name}.db`);
    migrate(`sqlite:${file}`);
    project.provide("migratedTemplate", { name: file });
    return async () => {
      for (const suffix of ["", "-wal", "-shm", ".migrate-lock"]) rmSync(`${file}${suffix}`, { force: true });
    };
  }
  const pool = `${name}_pool`;
  await withAdmin(async (c) => {
    await c.query(`CREATE DATABASE ${name}`);
    await c.query(`CREATE TABLE ${pool} (name text PRIMARY KEY)`);
  });
  const url = new URL(POSTGRES_ADMIN_URL);
  url.pathname = `/${name}`;
  migrate(url.toString());
  const shape = await withAdmin(databaseShape, url.toString());
  project.provide("migratedTemplate", { name, pool, shape });
  return () =>
    withAdmin(async (c) => {
      for (const { name: db } of (await c.query<{ name: string }>(`SELECT name FROM ${pool}`)).rows) await c.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
      await c.query(`DROP TABLE ${pool}`);
      await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    });
}
