import type { MikroORM } from "@mikro-orm/core";
import { shippedMigrations, type Dialect } from "./target.ts";

/** The migrations this code ships, per dialect: read from disk once (they change only with a deploy). */
const shipped = new Map<Dialect, string[]>();

/**
 * One round trip: the shipped migrations the database has not applied (a migration still
 * running, its transaction uncommitted, or not started). Throws when the database does not answer.
 * An instance of an older version finds none missing while a newer one migrates (its own
 * migrations are all there), so a rolling deploy keeps serving.
 */
export async function missingMigrations(orm: MikroORM, dialect: Dialect): Promise<string[]> {
  let names = shipped.get(dialect);
  if (!names) shipped.set(dialect, (names = shippedMigrations(dialect)));
  const rows = (await orm.em.getConnection().execute("select name from mikro_orm_migrations")) as { name: string }[];
  const applied = new Set(rows.map((r) => r.name.replace(/\.(ts|js)$/, "")));
  return names.filter((name) => !applied.has(name));
}
