import cluster from "node:cluster";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { dirname, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { applyEnv, ConfigError, resolveConfig, type PortcullisConfig } from "./config/index.ts";
import { spawn } from "node:child_process";
import type { MikroORM } from "@mikro-orm/core";
import { hasPendingMigrations, migrateUp, openOrm, parseDatabaseUrl } from "./db/orm.ts";
import { AuthError } from "./errors.ts";
import { BootstrapError, createAdmin } from "./modules/admin/bootstrap.service.ts";
import { createPortcullis } from "./index.ts";
import { parseWorkers, runPrimary, workerIndex } from "./cluster.ts";
import { pino } from "pino";
import { PASSWORD_FLAG_WARNING, readAdminPassword } from "./cli-password.ts";

const USAGE = `Usage: portcullis <serve|migrate|create-admin> [--config <file>]

  serve         start the HTTP service (migrations are applied first)
                [--workers <n|auto>]: n processes sharing the port (node:cluster; also
                PORTCULLIS_WORKERS); their session caches and rate limits stay in step
  migrate       apply pending migrations and exit
  create-admin  --email <email> [--name <name>]
                create an admin user on the configured database (or give an existing
                user the admin role; its password is then left alone); prints the user id.
                A new user's password comes from PORTCULLIS_ADMIN_PASSWORD, else standard
                input when piped, else a prompt (no echo). --password <password> still
                works but leaves it in the process list and shell history.

Config: --config <file> or PORTCULLIS_CONFIG (a module whose default export is the config).
Env overrides: PORT, HOST, DATABASE_URL, PUBLIC_URL, AUTH_SECRET (or AUTH_SECRETS: comma-separated,
newest first, for rotation), PORTCULLIS_ADMIN_PASSWORD (create-admin).`;

async function loadConfig(file: string | undefined): Promise<PortcullisConfig> {
  const path = file ?? process.env.PORTCULLIS_CONFIG;
  let config: PortcullisConfig = {};
  if (path) {
    const abs = resolve(path);
    if (!existsSync(abs)) throw new ConfigError(`Config file not found: ${abs}`);
    const mod = (await import(pathToFileURL(abs).href)) as { default?: PortcullisConfig };
    if (!mod.default || typeof mod.default !== "object") throw new ConfigError(`${abs} has no default export object`);
    config = mod.default;
  }
  return applyEnv(config, process.env);
}

/**
 * Development convenience (never in production): a secret generated once and kept next to the
 * SQLite file, so sessions and encrypted tokens survive restarts.
 */
function devSecret(config: PortcullisConfig): string {
  const file = resolve("data", "secret");
  if (existsSync(file)) return readFileSync(file, "utf8").trim();
  const secret = randomBytes(32).toString("base64url");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  void config;
  return secret;
}

/**
 * `serve`: pending migrations run in a `migrate` process of their own (same config and
 * environment), so the serving process never loads the migrations code (issue 14 lever 2).
 */
async function migrateInChild(orm: MikroORM, configFile: string | undefined): Promise<void> {
  if (!(await hasPendingMigrations(orm))) return;
  const args = [process.argv[1]!, "migrate", ...(configFile ? ["--config", configFile] : [])];
  const code = await new Promise<number | null>((resolve, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
    child.once("error", reject);
    child.once("exit", (c) => resolve(c));
  });
  if (code !== 0) throw new Error(`portcullis migrate exited with ${code}`);
}

async function main() {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: {
      config: { type: "string" },
      help: { type: "boolean", short: "h" },
      // create-admin
      email: { type: "string" },
      password: { type: "string" },
      name: { type: "string" },
      // serve
      workers: { type: "string" },
    },
  });
  const command = positionals[0];
  if (values.help || !command) {
    console.log(USAGE);
    process.exit(command ? 0 : 1);
  }
  const config = await loadConfig(values.config);
  if (command === "migrate") {
    const orm = await openOrm(parseDatabaseUrl(config.databaseUrl ?? "sqlite:./data/portcullis.db"));
    await migrateUp(orm);
    await orm.close();
    console.log("migrations applied");
    return;
  }
  if (command === "create-admin") {
    if (!values.email) {
      console.error("create-admin needs --email");
      process.exit(1);
    }
    if (values.password !== undefined) console.error(PASSWORD_FLAG_WARNING);
    const password = values.password ?? (() => readAdminPassword());
    const resolved = resolveConfig(config);
    const orm = await openOrm(parseDatabaseUrl(resolved.databaseUrl));
    try {
      await migrateUp(orm);
      const result = await createAdmin(orm.em.fork(), resolved, { email: values.email, password, name: values.name });
      console.error(result.created ? `created admin ${values.email}` : `${values.email} now holds the admin role`);
      console.log(result.userId);
    } catch (err) {
      if (!(err instanceof AuthError || err instanceof BootstrapError)) throw err;
      console.error(err instanceof AuthError ? `${err.authCode}: ${err.message}` : err.message);
      process.exitCode = 1;
    } finally {
      await orm.close();
    }
    return;
  }
  if (command !== "serve") {
    console.error(USAGE);
    process.exit(1);
  }
  if (!config.secret && !config.secrets && process.env.NODE_ENV !== "production") config.secret = devSecret(config);
  const workers = parseWorkers(values.workers ?? process.env.PORTCULLIS_WORKERS);
  if (workers > 1 && cluster.isPrimary) {
    const resolved = resolveConfig(config);
    const logger = pino({ level: resolved.logLevel });
    await runPrimary(workers, logger, async () => {
      const orm = await openOrm(parseDatabaseUrl(resolved.databaseUrl));
      try {
        await migrateUp(orm);
      } finally {
        await orm.close();
      }
    });
    return;
  }
  const index = workerIndex();
  const portcullis = await createPortcullis(
    config,
    index === null ? { migrate: (orm) => migrateInChild(orm, values.config) } : { migrate: false, sweep: index === 0, clusterWorker: true },
  );
  const url = await portcullis.listen();
  portcullis.app.logger.info({ url, basePath: portcullis.app.config.basePath, ...(index === null ? {} : { worker: index }) }, "portcullis listening");
  const stop = async () => {
    await portcullis.close();
    process.exit(0);
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

main().catch((err) => {
  if (err instanceof ConfigError) {
    console.error(err.message);
  } else {
    console.error(err);
  }
  process.exit(1);
});
