import { resolveConfig } from "../config/index.ts";
import { migrateUp, openOrm, parseDatabaseUrl, shippedMigrations } from "../db/orm.ts";
import { loadConfig } from "./load-config.ts";
import type { ConfigSources } from "./sources.ts";

/**
 * `portcullis migrate`: the whole config is validated first (a bad key fails here as it would in
 * `serve`), then pending migrations are applied under the migration lock; stdout names each one
 * applied ("applied <name>"), or says there was nothing to apply.
 */
export async function migrate(sources: ConfigSources): Promise<void> {
  const config = resolveConfig(await loadConfig(sources));
  const target = parseDatabaseUrl(config.databaseUrl);
  const orm = await openOrm(target);
  try {
    const applied = await migrateUp(orm);
    for (const name of applied) console.log(`applied ${name}`);
    const total = shippedMigrations(target.dialect).length;
    console.log(applied.length === 0 ? `nothing to apply: all ${total} migrations are applied` : `migrations applied: ${applied.length} (of ${total})`);
  } finally {
    await orm.close();
  }
}
