import { randomBytes } from "node:crypto";
import type { Server } from "node:http";
import { Server as NetServer, type AddressInfo } from "node:net";
import type { MikroORM } from "@mikro-orm/core";
import type { Logger } from "pino";
import { createLogger } from "./logger.ts";
import { createHttpServer, createRequestHandler } from "../rest-bridge/server.ts";
import type { App } from "./app.ts";
import { ConfigError, configuredSecrets, resolveConfig, type PortcullisConfig } from "./config/index.ts";
import { migrateUp, openOrm, parseDatabaseUrl } from "./db/orm.ts";
import { createSessionStore } from "./db/session-store/index.ts";
import { createMailer } from "./mail/mailer.ts";
import { checkMailSetup } from "./mail/startup.ts";
import { buildRegistry } from "./core/index.ts";
import { FAMILIES } from "./modules/index.ts";
import { detectLegacyHashes } from "./modules/email-password/index.ts";
import { apiKeyLibrary } from "./modules/api-key/index.ts";
import { SessionCache } from "./core/session/cache.ts";
import { clusterChannel, noChannel, postgresChannel } from "./core/session/invalidation.ts";
import { createRateLimiter } from "./rate-limit/rate-limit.ts";
import { createAddressLimiter } from "./rate-limit/address-limit.ts";
import { createStepUpLimiter } from "./rate-limit/step-up-limit.ts";
import { createSweeper, type Sweeper } from "./modules/maintenance/index.ts";
import { Metrics } from "./metrics/counters.ts";
import { startTracing, type TracingOptions } from "./tracing/index.ts";
import { announceMetrics, scrapeOf, startMetricsListener, type MetricsListener } from "./metrics/http.ts";
import { countingMailer } from "./metrics/mailer.ts";
import { appRouter, type AppRouter } from "./trpc/app-router.ts";
import { createContext, type ContextInput } from "./trpc/context.ts";
import { createCallerFactory } from "./trpc/init.ts";

export { defineConfig, type PortcullisConfig } from "./config/index.ts";
export { AuthError, ERRORS, type ErrorCode } from "./errors.ts";
export type { AppRouter } from "./trpc/app-router.ts";

/** close(): requests still running after this long are cut off. */
const DRAIN_TIMEOUT_MS = 10_000;
/** close(): connections without a request are closed after this grace (bytes already on their way get read first). */
const DRAIN_IDLE_GRACE_MS = 500;

/**
 * Graceful stop: no new connections; every request already sent on an accepted connection is
 * answered, even one not read yet (http.Server#close would destroy such a connection as idle:
 * net.Server#close stops accepting without that). Answers from now on carry Connection: close
 * (rest-bridge/server.ts), so each connection ends after its answer; connections with no request
 * at all are closed after DRAIN_IDLE_GRACE_MS, and whatever still runs after DRAIN_TIMEOUT_MS is cut.
 */
async function drain(s: ReturnType<typeof createHttpServer>): Promise<void> {
  let idle: NodeJS.Timeout | undefined;
  const grace = setTimeout(() => {
    s.closeIdleConnections();
    idle = setInterval(() => s.closeIdleConnections(), 50);
  }, DRAIN_IDLE_GRACE_MS);
  const hard = setTimeout(() => s.closeAllConnections(), DRAIN_TIMEOUT_MS);
  await new Promise<void>((resolve) => NetServer.prototype.close.call(s, () => resolve()));
  clearTimeout(grace);
  clearInterval(idle);
  clearTimeout(hard);
  s.close(); // http's own bookkeeping (its connection-checking timer); the socket is closed already
}

/** `app.secrets` newest first and `app.secret` (the newest); with none configured, one made for this process (dev only). */
function secretsOf(configured: string[]): { secrets: string[]; secret: string } {
  const secrets = configured.length > 0 ? configured : [randomBytes(32).toString("base64url")];
  return { secrets, secret: secrets[0]! };
}

const callerFactory = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof callerFactory>;

export interface CreateOptions {
  /**
   * Apply pending migrations on start (default true: in this process, loading the migrations
   * code only when one is pending); a function is called with the ORM instead (the CLI runs
   * them in a process of their own, so the serving one never loads that code).
   */
  migrate?: boolean | ((orm: MikroORM) => Promise<void>);
  /** Run the sweeper in this instance (default true; `serve --workers` runs it in one worker). */
  sweep?: boolean;
  /**
   * A worker of `serve --workers N` (node:cluster): on SQLite its session cache hears the other
   * workers' evictions over IPC, and rate limits count in the shared database by default.
   */
  clusterWorker?: boolean;
  logger?: Logger;
  /** Tracing with this exporter (an `@opentelemetry/sdk-trace-base` SpanExporter), whatever OTEL_TRACES_EXPORTER says (docs/operations.md "Tracing"). */
  tracing?: TracingOptions;
}

export interface Portcullis {
  app: App;
  router: AppRouter;
  /** In-process calls, as a request with these headers would make them. */
  createCaller(input?: Partial<ContextInput>): Caller;
  /** node:http request handler: /api/trpc and the REST bridge. */
  handler: ReturnType<typeof createRequestHandler>;
  /** Deletes expired rows on a schedule (`sweeper` config); `sweepOnce()` sweeps now. */
  sweeper: Sweeper;
  /** API keys from your own code (docs/machine-access.md): a key for a user id, every field settable. */
  createApiKey: ReturnType<typeof apiKeyLibrary>["createApiKey"];
  /** better-auth's verifyApiKey: `{ valid, error, key }`, spending a use. */
  verifyApiKey: ReturnType<typeof apiKeyLibrary>["verifyApiKey"];
  /** Starts an HTTP server (port 0 picks a free one); resolves to its URL. */
  listen(port?: number, host?: string): Promise<string>;
  /** Serves on a node:http server already listening (the CLI's start-up stand-in), so its port never closes in between; resolves to its URL. */
  serveOn(listening: Server): Promise<string>;
  close(): Promise<void>;
}

export async function createPortcullis(input: PortcullisConfig = {}, options: CreateOptions = {}): Promise<Portcullis> {
  const config = resolveConfig(input);
  const configured = configuredSecrets(config);
  if (configured.length === 0 && process.env.NODE_ENV === "production") {
    throw new ConfigError("Invalid Portcullis config:\n  secret: AUTH_SECRET is required when NODE_ENV=production");
  }
  const logger = options.logger ?? createLogger(config.logLevel);
  // How mail leaves, said once; SMTP checked (production: a failure stops the start), before anything is opened.
  await checkMailSetup(config, logger);
  const target = parseDatabaseUrl(config.databaseUrl);
  const orm = await openOrm(target);
  const migrate = options.migrate ?? true;
  if (typeof migrate === "function") await migrate(orm);
  else if (migrate) await migrateUp(orm);
  const origin = new URL(config.publicUrl).origin;
  const keys = secretsOf(configured);
  const sessionCache = new SessionCache(config.session.cacheTtlMs, config.session.cacheMaxEntries);
  const clustered = options.clusterWorker ?? false;
  const metrics = config.metrics.enabled ? new Metrics() : undefined;
  const mailer = createMailer(config, logger);
  const invalidation = !sessionCache.enabled
    ? noChannel
    : target.dialect === "postgresql"
      ? await postgresChannel(target.location, sessionCache, logger)
      : clustered
        ? clusterChannel(sessionCache)
        : noChannel;
  // Tracing (src/tracing): off unless OTEL_TRACES_EXPORTER or options.tracing; on, the session store's calls are spans too.
  const untraced = await createSessionStore(target, logger);
  const traced = await startTracing({ orm, sessions: untraced, dialect: target.dialect, logger }, options.tracing);
  const sessions = traced?.sessions ?? untraced;
  const app: App = {
    config,
    registry: buildRegistry(FAMILIES),
    ...keys,
    orm,
    dialect: target.dialect,
    sessions,
    sessionCache,
    invalidation,
    rateLimiter: createRateLimiter(config.rateLimit, { target, logger, clustered }),
    addressLimiter: createAddressLimiter(config.rateLimit, { target, logger, clustered, secret: keys.secret }),
    stepUpLimiter: createStepUpLimiter(config.rateLimit, { target, logger, clustered }),
    mailer: metrics ? countingMailer(mailer, metrics) : mailer,
    logger,
    clock: config.clock,
    cookieName: `${origin.startsWith("https:") ? "__Secure-" : ""}${config.cookiePrefix}.session_token`,
    origin,
    ...(metrics ? { metrics } : {}),
    ...(traced ? { tracing: traced.tracing } : {}),
  };
  // Imported better-auth hashes present? Then failed sign-ins are timed alike (legacy-hashes.ts).
  await detectLegacyHashes(app);
  // A worker of `serve --workers`: its scrapes report the whole service (metrics/cluster.ts).
  const clusterMetrics = metrics && clustered ? await (await import("./metrics/cluster.ts")).joinClusterMetrics(app, metrics) : undefined;
  const sweeper = createSweeper(app);
  if (options.sweep ?? true) sweeper.start();
  const handler = createRequestHandler(app);
  let server: ReturnType<typeof createHttpServer> | undefined;
  let metricsListener: MetricsListener | undefined;

  /** `s` listens and answers with the service: the metrics listener too, then the URL. */
  async function serving(s: Server): Promise<string> {
    server = s;
    // metrics.port: the metrics on a listener of their own (src/metrics/http.ts); the primary's, in a cluster.
    if (metrics && config.metrics.port !== undefined && !clustered) {
      metricsListener = await startMetricsListener({ ...config.metrics, port: config.metrics.port }, config.host, scrapeOf(app, metrics), logger);
      announceMetrics(logger, config.metrics, metricsListener.url);
    } else if (metrics && !clustered) announceMetrics(logger, config.metrics, null);
    const addr = s.address() as AddressInfo;
    return `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
  }

  return {
    app,
    router: appRouter,
    createCaller: (ctxInput = {}) => callerFactory(createContext(app, { headers: {}, ...ctxInput })),
    handler,
    sweeper,
    ...apiKeyLibrary(app),
    async listen(port = config.port, host = config.host) {
      const s = createHttpServer(app);
      await new Promise<void>((resolve, reject) => {
        s.once("error", reject);
        s.listen(port, host, () => resolve());
      });
      return serving(s);
    },
    serveOn: (listening) => serving(createHttpServer(app, listening)),
    async close() {
      await sweeper.stop();
      await metricsListener?.close();
      clusterMetrics?.close();
      if (server) {
        const s = server;
        await drain(s);
      }
      // Deferred sends still write to the database (a failed one deletes its token row).
      await app.mailer.close();
      await app.invalidation.close();
      await app.sessions.close();
      await app.rateLimiter.close();
      await app.addressLimiter.close();
      await app.stepUpLimiter.close();
      await orm.close();
      await app.tracing?.shutdown();
    },
  };
}
