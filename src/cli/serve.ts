import cluster from "node:cluster";
import type { Logger } from "pino";
import { createLogger } from "../logger.ts";
import { clearToListen, parseWorkers, runPrimary, workerIndex } from "../cluster.ts";
import { configuredSecrets, resolveConfig, type PortcullisConfig, type ResolvedConfig } from "../config/index.ts";
import { parseDatabaseUrl } from "../db/target.ts";
import type { Portcullis } from "../index.ts";
import { pendingBeforeLoad } from "./early-migrate.ts";
import { withDevSecret } from "./dev-secret.ts";
import { loadConfig } from "./load-config.ts";
import type { ConfigSources } from "./sources.ts";
import { whereToAdd } from "./sources.ts";
import { StartupLog } from "./startup-log.ts";
import { listenOr, StartupError } from "./startup-errors.ts";
import { startStartupResponder, type StartupResponder } from "./startup-responder.ts";
import { migrateEarly, migrateFirst } from "./start-migrations.ts";
import { onStopSignals } from "./stop-signals.ts";

/** The config as `serve` runs it: validated whole, with a secret (a development one outside production). */
async function serveConfig(sources: ConfigSources): Promise<{ input: PortcullisConfig; config: ResolvedConfig }> {
  const input = withDevSecret(await loadConfig(sources), sources.env);
  const config = resolveConfig(input);
  if (configuredSecrets(config).length === 0) {
    throw new StartupError([
      `portcullis: config key secret is not set, and NODE_ENV=production needs it (sessions and sealed tokens would not survive a restart). Fix: ${whereToAdd("secret", sources)} a random string of 32 or more characters (e.g. the output of \`openssl rand -base64 32\`).`,
    ]);
  }
  return { input, config };
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
  const { announceMetrics, startMetricsListener } = await import("../metrics/http.ts");
  if (port === undefined) return announceMetrics(logger, config.metrics, null);
  const listener = await listenOr(config, sources, () => startMetricsListener({ ...config.metrics, port }, config.host, scrape, logger));
  announceMetrics(logger, config.metrics, listener.url);
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

/** `serve --workers N`, the primary: migrations behind the start-up responder, the metrics sum, then the workers. */
async function servePrimary(workers: number, config: ResolvedConfig, sources: ConfigSources, logger: Logger): Promise<void> {
  const { hasPendingMigrations, migrateUp, openOrm } = await import("../db/orm.ts");
  await runPrimary(workers, logger, async () => {
    let responder: StartupResponder | undefined;
    const orm = await openOrm(parseDatabaseUrl(config.databaseUrl));
    try {
      if (await hasPendingMigrations(orm)) {
        responder = await listenOr(config, sources, () => startStartupResponder(config));
        const applied = await migrateUp(orm);
        logger.info({ migrations: applied }, "migrations applied");
      }
      await primaryMetrics(config, sources, logger);
    } catch (err) {
      await responder?.close();
      throw err;
    } finally {
      await orm.close();
    }
    // Held until a worker is ready to listen (cluster.ts clearToListen); the port is free as soon as close() is called.
    const held = responder;
    return held && (async () => void held.close());
  });
}

/** One serving process (alone, or a worker): migrated, built, listening; resolves to the service and its URL. */
async function serveOne(input: PortcullisConfig, config: ResolvedConfig, sources: ConfigSources, configFlag: string | undefined, logger: Logger, index: number | null) {
  // One process: asked once, before loading; only a database that did not answer is asked again
  // by migrateFirst, once it is open (and names the problem if it still does not answer).
  const pending = index === null ? await pendingBeforeLoad(parseDatabaseUrl(config.databaseUrl)) : false;
  const early = pending === true ? await migrateEarly(config, sources, configFlag, logger) : null;
  const { createPortcullis } = await import("../index.ts");
  // The start-up responder, when migrations ran: the service takes its socket over (startup-responder.ts).
  let responder = early ? await early.migrated : null;
  let portcullis: Portcullis;
  try {
    portcullis = await createPortcullis(
      input,
      index === null
        ? { logger, migrate: pending === undefined ? async (orm) => void (responder = await migrateFirst(orm, config, sources, configFlag, logger)) : false }
        : { logger, migrate: false, sweep: index === 0, clusterWorker: true },
    );
  } catch (err) {
    await responder?.close();
    throw err;
  }
  try {
    const standIn = responder;
    if (index !== null) await clearToListen(); // the primary's start-up responder lets go of the port
    const url = await listenOr(config, sources, () => (standIn ? portcullis.serveOn(standIn.handOver()) : portcullis.listen()));
    return { portcullis, url };
  } catch (err) {
    await portcullis.close().catch(() => undefined);
    throw err;
  }
}

export async function serve(opts: { config?: string; workers?: string }, sources: ConfigSources): Promise<void> {
  const { input, config } = await serveConfig(sources);
  const workers = parseWorkers(opts.workers ?? sources.env.PORTCULLIS_WORKERS);
  const startup = new StartupLog();
  const logger = createLogger(config.logLevel, startup.destination);
  try {
    if (workers > 1 && cluster.isPrimary) {
      await servePrimary(workers, config, sources, logger);
      startup.release();
      return;
    }
    const index = workerIndex();
    const { portcullis, url } = await serveOne(input, config, sources, opts.config, logger, index);
    startup.release();
    stopOnSignals(portcullis);
    await announce(portcullis, url, input, sources, index);
  } catch (err) {
    startup.fail();
    throw err;
  }
}
