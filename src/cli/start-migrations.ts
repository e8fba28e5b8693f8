import { spawn } from "node:child_process";
import type { MikroORM } from "@mikro-orm/core";
import type { Logger } from "pino";
import type { ResolvedConfig } from "../config/index.ts";
import type { ConfigSources } from "./sources.ts";
import { listenOr, StartupError } from "./startup-errors.ts";
import { startStartupResponder, type StartupResponder } from "./startup-responder.ts";

/**
 * `serve`'s migrations at start, each in a `migrate` process of its own, behind the start-up
 * responder (startup-responder.ts) that holds the port until the service takes it over.
 */

/** `portcullis migrate` in a child process (same config and environment); its names of applied migrations are logged. */
async function runMigrateProcess(configFlag: string | undefined, logger: Logger): Promise<void> {
  const script = process.argv[1]!;
  // Under tsx (npm run dev) the child needs the same loader flags; an inspector port would clash.
  const execArgv = process.execArgv.filter((a) => !a.startsWith("--inspect"));
  const args = [...execArgv, script, "migrate", ...(configFlag ? ["--config", configFlag] : [])];
  let out = "";
  const code = await new Promise<number | null>((done, reject) => {
    const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "inherit"] });
    child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
    child.once("error", reject);
    child.once("close", (c) => done(c));
  });
  // Its own error line is on stderr already (inherited): nothing more to say than to stop.
  if (code !== 0) throw new StartupError(code === 1 ? [] : [`portcullis: the migrate step ended with ${code}.`]);
  const applied = out.split("\n").filter((l) => l.startsWith("applied ")).map((l) => l.slice("applied ".length));
  if (applied.length > 0) logger.info({ migrations: applied }, "migrations applied");
}

/** Runs the migrate process while `responder` holds the port; a failure lets the port go. The responder stays up otherwise, for the service to take over. */
async function migrateBehind(responder: StartupResponder, configFlag: string | undefined, logger: Logger): Promise<StartupResponder> {
  try {
    await runMigrateProcess(configFlag, logger);
    return responder;
  } catch (err) {
    await responder.close();
    throw err;
  }
}

/**
 * Pending migrations run in a `migrate` process of their own, so the serving process never loads
 * the migrations code; meanwhile the port answers liveness 200 and readiness
 * 503, and keeps answering until the service takes the socket over (null: nothing was pending).
 */
export async function migrateFirst(orm: MikroORM, config: ResolvedConfig, sources: ConfigSources, configFlag: string | undefined, logger: Logger): Promise<StartupResponder | null> {
  const { hasPendingMigrations } = await import("../db/orm.ts");
  if (!(await hasPendingMigrations(orm))) return null;
  return migrateBehind(await listenOr(config, sources, () => startStartupResponder(config)), configFlag, logger);
}

/**
 * The same, started before this process loads the service's modules (MikroORM and the rest, which
 * the migrate process loads too), when the bare driver already told that a migration is pending
 * (always on a newcomer's first start): the two processes load side by side. `migrated` settles
 * when the migrate process has ended, with the responder still holding the port.
 */
export async function migrateEarly(config: ResolvedConfig, sources: ConfigSources, configFlag: string | undefined, logger: Logger): Promise<{ migrated: Promise<StartupResponder> }> {
  const responder = await listenOr(config, sources, () => startStartupResponder(config));
  const migrated = migrateBehind(responder, configFlag, logger);
  migrated.catch(() => undefined); // awaited once the modules are loaded: not an unhandled rejection meanwhile
  return { migrated }; // wrapped: an async function returning the promise itself would wait for it
}
