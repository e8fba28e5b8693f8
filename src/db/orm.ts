import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { MikroORM, Options } from "@mikro-orm/core";
import { loadPackage } from "../load.ts";
import { entities } from "./entities/index.ts";
import { DatabaseUnavailableError, migrationsRoot, missingMigration, type DatabaseTarget, type Dialect } from "./target.ts";

export { DatabaseUnavailableError, parseDatabaseUrl, shippedMigrations, type DatabaseTarget, type Dialect } from "./target.ts";

/**
 * MikroORM options for a target; also used by mikro-orm.config.ts (the CLI). Only the target's
 * driver is loaded, and the migrations code (umzug, the migration classes) only with
 * `withMigrations` (the CLI) or when migrateUp() finds one pending: a serving process whose
 * database is up to date never loads it.
 */
export async function ormOptions(target: DatabaseTarget, opts: { withMigrations?: boolean } = {}): Promise<Options> {
  const common = {
    entities,
    // Migrations under vitest need a plain dynamic import (else "Unknown file extension .ts").
    dynamicImportProvider: (id: string) => import(id),
    allowGlobalContext: false,
    debug: false,
    forceUtcTimezone: true,
    ignoreUndefinedInQuery: true,
  } satisfies Partial<Options>;
  const migrations = {
    path: resolve(migrationsRoot, target.dialect),
    snapshot: false,
    silent: true,
    emit: "ts" as const,
    transactional: true,
    ...(opts.withMigrations ? { migrationsList: await migrationsList(target.dialect) } : {}),
  };
  const extensions = opts.withMigrations ? [(loadPackage("@mikro-orm/migrations") as typeof import("@mikro-orm/migrations")).Migrator] : [];
  if (target.dialect === "sqlite") {
    const { BetterSqliteDriver } = loadPackage("@mikro-orm/better-sqlite") as typeof import("@mikro-orm/better-sqlite");
    return { ...common, extensions, driver: BetterSqliteDriver, dbName: target.location, migrations } as Options;
  }
  const { PostgreSqlDriver } = loadPackage("@mikro-orm/postgresql") as typeof import("@mikro-orm/postgresql");
  // ensureDatabase off: a DATABASE_URL naming a database that does not exist (a typo) must fail, not get an empty one created.
  return { ...common, extensions, driver: PostgreSqlDriver, clientUrl: target.location, pool: { min: 0, max: 10 }, ensureDatabase: false, migrations } as Options;
}

async function migrationsList(dialect: Dialect) {
  const { postgresMigrations, sqliteMigrations } = await import("./migrations/index.ts");
  return dialect === "sqlite" ? sqliteMigrations : postgresMigrations;
}

export async function openOrm(target: DatabaseTarget): Promise<MikroORM> {
  try {
    return await openOrmUnchecked(target);
  } catch (err) {
    throw new DatabaseUnavailableError(target, err);
  }
}

async function openOrmUnchecked(target: DatabaseTarget): Promise<MikroORM> {
  if (target.dialect === "sqlite") {
    mkdirSync(dirname(target.location), { recursive: true });
    const { MikroORM } = loadPackage("@mikro-orm/better-sqlite") as typeof import("@mikro-orm/better-sqlite");
    const orm = await MikroORM.init((await ormOptions(target)) as never);
    // WAL lets the session store's reader run beside writers. synchronous = FULL: a commit is on
    // disk before it is answered, so a revocation, a ban or a password change survives a power
    // cut. better-sqlite3 is built with SQLITE_DEFAULT_WAL_SYNCHRONOUS=1 (NORMAL): without this a
    // commit in WAL mode waited for the next checkpoint to reach the disk. Only writes that
    // create a session or an account relax it, one statement at a time (session-store/sqlite.ts).
    await orm.em.getConnection().execute("pragma journal_mode = wal");
    await orm.em.getConnection().execute("pragma synchronous = full");
    await orm.em.getConnection().execute("pragma busy_timeout = 5000");
    return orm as unknown as MikroORM;
  }
  const { MikroORM } = loadPackage("@mikro-orm/postgresql") as typeof import("@mikro-orm/postgresql");
  const orm = (await MikroORM.init((await ormOptions(target)) as never)) as unknown as MikroORM;
  // MikroORM connects lazily and only logs a failure: one round trip now, so a server that is
  // down, a database that does not exist or a refused login fails here with the driver's error.
  try {
    await orm.em.getConnection().execute("select 1");
  } catch (err) {
    await orm.close(true).catch(() => undefined);
    throw err;
  }
  return orm;
}

/** The database an ORM opened by openOrm() talks to. */
function targetOf(orm: MikroORM): DatabaseTarget {
  const url = orm.config.get("clientUrl");
  return url ? { dialect: "postgresql", location: url } : { dialect: "sqlite", location: orm.config.get("dbName")! };
}

/** Whether a shipped migration is not applied yet: one query, no migrations code loaded. */
export async function hasPendingMigrations(orm: MikroORM): Promise<boolean> {
  const dialect = targetOf(orm).dialect;
  let applied: string[];
  try {
    const connection = orm.em.getConnection() as unknown as { execute(sql: string): Promise<{ name: string }[]> };
    applied = (await connection.execute("select name from mikro_orm_migrations")).map((r) => r.name);
  } catch {
    return true; // no migrations table yet: a fresh database
  }
  return missingMigration(dialect, applied);
}

/**
 * Applies pending migrations, one process at a time per database (db/migration-lock.ts); resolves
 * to the names of those this call applied. The migrations code is loaded only when one is pending.
 */
export async function migrateUp(orm: MikroORM): Promise<string[]> {
  if (!(await hasPendingMigrations(orm))) return [];
  const target = targetOf(orm);
  const { Migrator } = loadPackage("@mikro-orm/migrations") as typeof import("@mikro-orm/migrations");
  const [{ withMigrationLock }, list] = await Promise.all([
    import("./migration-lock.ts"),
    migrationsList(target.dialect),
  ]);
  orm.config.set("migrations", { ...orm.config.get("migrations"), migrationsList: list });
  const applied = await withMigrationLock(target, () => new Migrator(orm.em as never).up());
  return applied.map((m) => m.name.replace(/\.(ts|js)$/, ""));
}
