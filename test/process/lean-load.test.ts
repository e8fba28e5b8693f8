import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, testDialect, type TestDatabase } from "../harness/database.ts";
import { configFile, killAll, postJson, startServerProcess, type ServerProcess } from "./harness.ts";

/**
 * The serving process loads only what runs. Started the way an operator does
 * (`portcullis serve`), on a fresh database (migrations run in a `migrate` process of their
 * own) and again on the migrated one, with a sign-up served: no migrations code (umzug,
 * @mikro-orm/migrations), no other dialect's driver, no Redis client, no SMTP transport, no
 * WebAuthn, no undici, no jose. On the fresh database the migrate process starts before the
 * serving process loads MikroORM (cli/early-migrate.ts: the two load side by side).
 */

const probe = join(import.meta.dirname, "module-probe.mjs");
/** The package a loaded code file belongs to (MikroORM reads its sibling packages' package.json for a version check: not code). */
const packageOf = (file: string) => (file.endsWith("package.json") ? null : (/node_modules\/((@[^/]+\/)?[^/]+)/.exec(file)?.[1] ?? null));

async function loadedPackages(server: ServerProcess): Promise<Set<string>> {
  const before = server.output().length;
  server.kill("SIGUSR2");
  for (let i = 0; i < 100; i++) {
    const line = server.output().slice(before).split("\n").find((l) => l.startsWith("LOADED_MODULES "));
    if (line) return new Set((JSON.parse(line.slice("LOADED_MODULES ".length)) as string[]).map(packageOf).filter((p): p is string => p !== null));
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no module list from the server:\n${server.output()}`);
}

const NEVER_WHEN_UNUSED = ["@mikro-orm/migrations", "umzug", "ioredis", "nodemailer", "@simplewebauthn/server", "undici", "jose", "prom-client", "tsx", "esbuild"];
const otherDriver = testDialect === "sqlite" ? ["@mikro-orm/postgresql", "pg"] : ["@mikro-orm/better-sqlite"];

describe(`the serving process on ${testDialect} loads only what runs`, () => {
  let db: TestDatabase;
  let config: ReturnType<typeof configFile>;
  const started: ServerProcess[] = [];
  beforeAll(async () => {
    db = await createTestDatabase();
    config = configFile({ rateLimit: { enabled: false }, logLevel: "warn" });
  });
  afterAll(async () => {
    for (const s of started) s.kill("SIGTERM");
    await Promise.all(started.map((s) => s.exited));
    killAll();
    config?.remove();
    await db?.drop();
  }, 30_000);

  it("first start (migrations pending) and restart: no migrations code, no unused driver, store, transport or client", async () => {
    for (const round of ["fresh database", "migrated database"]) {
      const server = await startServerProcess({ databaseUrl: db.url, config: config.path, nodeArgs: ["--import", probe] });
      started.push(server);
      const up = await postJson(`${server.auth}/sign-up/email`, { name: "Lean", email: `lean.${Date.now()}.${round.length}@example.test`, password: "lean-password-1" });
      expect(up.status).toBe(200);
      const migrateStarts = server.output().split("\n").filter((l) => l.startsWith("MIGRATE_STARTED "));
      if (round === "fresh database") expect(migrateStarts.map((l) => JSON.parse(l.slice("MIGRATE_STARTED ".length)))).toEqual([{ mikroOrmLoaded: false }]);
      else expect(migrateStarts).toEqual([]);
      const loaded = await loadedPackages(server);
      expect(loaded.has("@mikro-orm/core"), round).toBe(true); // the probe sees what it should
      for (const pkg of [...NEVER_WHEN_UNUSED, ...otherDriver]) expect(loaded.has(pkg), `${pkg} loaded (${round})`).toBe(false);
      server.kill("SIGTERM");
      expect(await server.exited).toBe(0);
    }
  }, 120_000);
});
