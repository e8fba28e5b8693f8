import { spawn } from "node:child_process";
import cluster from "node:cluster";
import type { MikroORM } from "@mikro-orm/core";
import type { Logger } from "pino";
import { createLogger } from "../logger.ts";
import { parseWorkers, runPrimary, workerIndex } from "../cluster.ts";
import { configuredSecrets, resolveConfig, type PortcullisConfig, type ResolvedConfig } from "../config/index.ts";
import { parseDatabaseUrl } from "../db/target.ts";
import type { Portcullis } from "../index.ts";
import { pendingBeforeLoad } from "./early-migrate.ts";
import { withDevSecret } from "./dev-secret.ts";
import { loadConfig } from "./load-config.ts";
import type { ConfigSources } from "./sources.ts";
import { whereToSet } from "./sources.ts";
import { describeListenError, StartupError } from "./startup-errors.ts";
import { startStartupResponder, type StartupResponder } from "./startup-responder.ts";
import { onStopSignals } from "./stop-signals.ts";

/** The config as `serve` runs it: validated whole, with a secret (a development one outside production). */
async function serveConfig(sources: ConfigSources): Promise<{ input: PortcullisConfig; config: ResolvedConfig }> {
  const input = withDevSecret(await loadConfig(sources), sources.env);
  const config = resolveConfig(input);
  if (configuredSecrets(config).length === 0) {
    throw new StartupError([
      `portcullis: config key secret is not set, and NODE_ENV=production needs it (sessions and sealed tokens would not survive a restart). Fix: ${whereToSet("secret", sources)} a random string of 32 or more characters (e.g. the output of \`openssl rand -base64 32\`).`,
    ]);
  }
  return { input, config };
}

/** Listening on the config's port, or one line naming the port (or host) and the fix. */
async function listenOr<T>(config: ResolvedConfig, sources: ConfigSources, listen: () => Promise<T>): Promise<T> {
  try {
    return await listen();
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { port?: number };
    if (e.syscall === "listen" || e.syscall === "getaddrinfo" || e.code === "EADDRINUSE") {
      // The metrics listener (metrics.port) fails the same way: name the key that set the port.
      const { port: metricsPort, host: metricsHost } = config.metrics;
      if (metricsPort !== undefined && metricsPort !== config.port && e.port === metricsPort) {
        throw new StartupError([describeListenError(e, metricsHost ?? config.host, metricsPort, sources, "metrics.port")]);
      }
      throw new StartupError([describeListenError(e, config.host, config.port, sources)]);
    }
    throw err;
  }
}

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
 * the migrations code (issue 14 lever 2); meanwhile the port answers liveness 200 and readiness
 * 503, and keeps answering until the service takes the socket over (null: nothing was pending).
 */
async function migrateFirst(orm: MikroORM, config: ResolvedConfig, sources: ConfigSources, configFlag: string | undefined, logger: Logger): Promise<StartupResponder | null> {
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
async function migrateEarly(config: ResolvedConfig, sources: ConfigSources, configFlag: string | undefined): Promise<{ migrated: Promise<StartupResponder> }> {
  const responder = await listenOr(config, sources, () => startStartupResponder(config));
  const migrated = migrateBehind(responder, configFlag, createLogger(config.logLevel));
  migrated.catch(() => undefined); // awaited once the modules are loaded: not an unhandled rejection meanwhile
  return { migrated }; // wrapped: an async function returning the promise itself would wait for it
}

/**
 * `serve --workers` with metrics on: the primary adds up the workers' numbers for every scrape
 * (metrics/cluster.ts), and listens on metrics.port itself (a port the workers shared would
 * answer each scrape from one of them).
 */
async function primaryMetrics(config: ResolvedConfig, sources: ConfigSources, logger: Logger): Promise<void> {
  const { enabled, port } = config.metrics;
  if (!enabled) return;
  const scrape = await (await import("../metrics/cluster.ts")).aggregateWorkers();
  if (port === undefined) return;
  const { startMetricsListener } = await import("../metrics/http.ts");
  const listener = await listenOr(config, sources, () => startMetricsListener({ ...config.metrics, port }, config.host, scrape, logger));
  logger.info({ url: listener.url }, "metrics listening");
}

/** What an operator needs to see at start: where it listens, its public URL, each provider's redirect URI. */
async function announce(portcullis: Portcullis, url: string, input: PortcullisConfig, sources: ConfigSources, worker: number | null) {
  const { logger, config } = portcullis.app;
  logger.info({ url, publicUrl: config.publicUrl, basePath: config.basePath, ...(worker === null ? {} : { worker }) }, "portcullis listening");
  if (input.publicUrl === undefined && sources.env.NODE_ENV === "production") {
    logger.warn({ publicUrl: config.publicUrl }, "publicUrl is not set: links, cookies and OAuth redirect URIs use the listening address; set PUBLIC_URL to the address users reach");
  }
  const providers = Object.keys(config.providers ?? {});
  if (providers.length === 0 || worker !== null && worker !== 0) return;
  const { redirectUri } = await import("../modules/oauth/runtime.ts");
  for (const provider of providers) logger.info({ provider, redirectUri: redirectUri(portcullis.app, provider) }, "OAuth redirect URI (register it with the provider)");
}

/**
 * SIGTERM / SIGINT: stop accepting, finish the requests in flight, close the database (index.ts
 * close(): drain, then the stores), exit 0. A second signal while draining exits at once
 * (stop-signals.ts: not the copies of one Ctrl-C).
 */
function stopOnSignals(portcullis: Portcullis) {
  const { logger } = portcullis.app;
  onStopSignals(
    (signal) => {
      logger.info({ signal }, "portcullis stopping: finishing requests in flight");
      portcullis.close().then(
        () => {
          logger.info("portcullis stopped");
          process.exit(0);
        },
        (err: unknown) => {
          logger.error({ err }, "portcullis did not stop cleanly");
          process.exit(1);
        },
      );
    },
    (signal) => {
      logger.warn({ signal }, "second signal while stopping: exiting now");
      process.exit(1);
    },
  );
}

export async function serve(opts: { config?: string; workers?: string }, sources: ConfigSources): Promise<void> {
  const { input, config } = await serveConfig(sources);
  const workers = parseWorkers(opts.workers ?? sources.env.PORTCULLIS_WORKERS);
  if (workers > 1 && cluster.isPrimary) {
    const { hasPendingMigrations, migrateUp, openOrm } = await import("../db/orm.ts");
    const logger = createLogger(config.logLevel);
    await runPrimary(workers, logger, async () => {
      const orm = await openOrm(parseDatabaseUrl(config.databaseUrl));
      try {
        if (await hasPendingMigrations(orm)) {
          const responder = await listenOr(config, sources, () => startStartupResponder(config));
          try {
            const applied = await migrateUp(orm);
            logger.info({ migrations: applied }, "migrations applied");
          } finally {
            await responder.close();
          }
        }
      } finally {
        await orm.close();
      }
      await primaryMetrics(config, sources, logger);
    });
    return;
  }
  const index = workerIndex();
  // One process: asked once, before loading; only a database that did not answer is asked again
  // by migrateFirst, once it is open (and names the problem if it still does not answer).
  const pending = index === null ? await pendingBeforeLoad(parseDatabaseUrl(config.databaseUrl)) : false;
  const early = pending === true ? await migrateEarly(config, sources, opts.config) : null;
  const { createPortcullis } = await import("../index.ts");
  // The start-up responder, when migrations ran: the service takes its socket over (startup-responder.ts).
  let responder = early ? await early.migrated : null;
  let portcullis: Portcullis;
  try {
    portcullis = await createPortcullis(
      input,
      index === null
        ? { migrate: pending === undefined ? async (orm) => void (responder = await migrateFirst(orm, config, sources, opts.config, createLogger(config.logLevel))) : false }
        : { migrate: false, sweep: index === 0, clusterWorker: true },
    );
  } catch (err) {
    await responder?.close();
    throw err;
  }
  let url: string;
  try {
    const standIn = responder;
    url = await listenOr(config, sources, () => (standIn ? portcullis.serveOn(standIn.handOver()) : portcullis.listen()));
  } catch (err) {
    await portcullis.close().catch(() => undefined);
    throw err;
  }
  stopOnSignals(portcullis);
  await announce(portcullis, url, input, sources, index);
}
