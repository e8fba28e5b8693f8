import type { MigrationObject } from "@mikro-orm/core";
import { Migration20261122000000_initial as SqliteInitial } from "./sqlite/Migration20261122000000_initial.ts";
import { Migration20261122000000_initial as PostgresInitial } from "./postgresql/Migration20261122000000_initial.ts";

// Listed explicitly (no file globbing): works the same under tsx, vitest and a bundle.
// SQLite and PostgreSQL keep separate folders because their SQL differs (STACK.md trap 4).
export const sqliteMigrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: SqliteInitial },
];
export const postgresMigrations: MigrationObject[] = [
  { name: "Migration20261122000000_initial", class: PostgresInitial },
];
