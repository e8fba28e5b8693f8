import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { MikroORM, Options } from "@mikro-orm/core";
import { BetterSqliteDriver } from "@mikro-orm/better-sqlite";
import { PostgreSqlDriver } from "@mikro-orm/postgresql";
import { Migrator } from "@mikro-orm/migrations";
import { entities } from "./entities/index.ts";
import { postgresMigrations, sqliteMigrations } from "./migrations/index.ts";
import { withMigrationLock } from "./migration-lock.ts";

export type Dialect = "sqlite" | "postgresql";

export interface DatabaseTarget {
  dialect: Dialect;
  /** SQLite: absolute file path. PostgreSQL: connection URL. */
  location: string;
}

const migrationsRoot = resolve(dirname(fileURLToPath(import.meta.url)), "migrations");

export function parseDatabaseUrl(url: string): DatabaseTarget {
  if (url.startsWith("sqlite:")) {
    return { dialect: "sqlite", location: resolve(url.slice("sqlite:".length)) };
  }
  return { dialect: "postgresql", location: url };
}

/** MikroORM options for a target; also used by mikro-orm.config.ts (the CLI). */
export function ormOptions(target: DatabaseTarget): Options {
  const common = {
    entities,
    extensions: [Migrator],
    // STACK.md trap 3: migrations under vitest need a plain dynamic import.
    dynamicImportProvider: (id: string) => import(id),
    allowGlobalContext: false,
    debug: false,
    forceUtcTimezone: true,
    ignoreUndefinedInQuery: true,
  } satisfies Partial<Options>;
  if (target.dialect === "sqlite") {
    return {
      ...common,
      driver: BetterSqliteDriver,
      dbName: target.location,
      migrations: {
        path: resolve(migrationsRoot, "sqlite"),
        migrationsList: sqliteMigrations,
        snapshot: false,
        silent: true,
        emit: "ts",
        transactional: true,
      },
    } as Options;
  }
  return {
    ...common,
    driver: PostgreSqlDriver,
    clientUrl: target.location,
    pool: { min: 0, max: 10 },
    migrations: {
      path: resolve(migrationsRoot, "postgresql"),
      migrationsList: postgresMigrations,
      snapshot: false,
      silent: true,
      emit: "ts",
      transactional: true,
    },
  } as Options;
}

export async function openOrm(target: DatabaseTarget): Promise<MikroORM> {
  if (target.dialect === "sqlite") {
    mkdirSync(dirname(target.location), { recursive: true });
    const { MikroORM } = await import("@mikro-orm/better-sqlite");
    const orm = await MikroORM.init(ormOptions(target) as never);
    // WAL lets the session store's reader run beside writers; durable on commit with synchronous=NORMAL in WAL.
    await orm.em.getConnection().execute("pragma journal_mode = wal");
    await orm.em.getConnection().execute("pragma busy_timeout = 5000");
    return orm as unknown as MikroORM;
  }
  const { MikroORM } = await import("@mikro-orm/postgresql");
  return (await MikroORM.init(ormOptions(target) as never)) as unknown as MikroORM;
}

/** The database an ORM opened by openOrm() talks to. */
function targetOf(orm: MikroORM): DatabaseTarget {
  const url = orm.config.get("clientUrl");
  return url ? { dialect: "postgresql", location: url } : { dialect: "sqlite", location: orm.config.get("dbName")! };
}

/** Applies pending migrations, one process at a time per database (db/migration-lock.ts). */
export async function migrateUp(orm: MikroORM): Promise<void> {
  await withMigrationLock(targetOf(orm), () => orm.getMigrator().up());
}
