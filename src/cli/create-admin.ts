import { resolveConfig } from "../config/index.ts";
import { migrateUp, openOrm, parseDatabaseUrl } from "../db/orm.ts";
import { AuthError } from "../errors.ts";
import { BootstrapError, createAdmin } from "../modules/admin/index.ts";
import { PASSWORD_FLAG_WARNING, readAdminPassword } from "../cli-password.ts";
import { loadConfig } from "./load-config.ts";
import type { ConfigSources } from "./sources.ts";
import { StartupError } from "./startup-errors.ts";

/**
 * `portcullis create-admin --email E [--name N]`: creates an admin on the configured database (or
 * gives an existing user the admin role; its password is then left alone) and prints the user id.
 * The password: see cli-password.ts.
 */
export async function createAdminCommand(opts: { email: string; name?: string; password?: string }, sources: ConfigSources): Promise<void> {
  const config = resolveConfig(await loadConfig(sources));
  if (opts.password !== undefined) console.error(PASSWORD_FLAG_WARNING);
  const password = opts.password ?? (() => readAdminPassword());
  const orm = await openOrm(parseDatabaseUrl(config.databaseUrl));
  try {
    await migrateUp(orm);
    const result = await createAdmin(orm.em.fork(), config, { email: opts.email, password, name: opts.name });
    console.error(result.created ? `created admin ${opts.email}` : `${opts.email} now holds the admin role`);
    console.log(result.userId);
  } catch (err) {
    if (err instanceof AuthError) throw new StartupError([`${err.authCode}: ${err.message}`]);
    if (err instanceof BootstrapError) throw new StartupError([err.message]);
    throw err;
  } finally {
    await orm.close();
  }
}
