import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import { pino, type Logger } from "pino";
import { createHttpServer, createRequestHandler } from "../rest-bridge/server.ts";
import type { App } from "./app.ts";
import { ConfigError, resolveConfig, type PortcullisConfig } from "./config/index.ts";
import { migrateUp, openOrm, parseDatabaseUrl } from "./db/orm.ts";
import { createSessionStore } from "./db/session-store/index.ts";
import { createMailer } from "./mail/mailer.ts";
import { SessionCache } from "./modules/session/session-cache.ts";
import { createRateLimiter } from "./modules/rate-limit/rate-limit.ts";
import { appRouter, type AppRouter } from "./trpc/app-router.ts";
import { createContext, type ContextInput } from "./trpc/context.ts";
import { createCallerFactory } from "./trpc/init.ts";

export { defineConfig, type PortcullisConfig } from "./config/index.ts";
export { AuthError, ERRORS, type ErrorCode } from "./errors.ts";
export type { AppRouter } from "./trpc/app-router.ts";

const callerFactory = createCallerFactory(appRouter);
export type Caller = ReturnType<typeof callerFactory>;

export interface CreateOptions {
  /** Apply pending migrations on start (default true). */
  migrate?: boolean;
  logger?: Logger;
}

export interface Portcullis {
  app: App;
  router: AppRouter;
  /** In-process calls, as a request with these headers would make them. */
  createCaller(input?: Partial<ContextInput>): Caller;
  /** node:http request handler: /api/trpc and the REST bridge. */
  handler: ReturnType<typeof createRequestHandler>;
  /** Starts an HTTP server (port 0 picks a free one); resolves to its URL. */
  listen(port?: number, host?: string): Promise<string>;
  close(): Promise<void>;
}

export async function createPortcullis(input: PortcullisConfig = {}, options: CreateOptions = {}): Promise<Portcullis> {
  const config = resolveConfig(input);
  if (!config.secret && process.env.NODE_ENV === "production") {
    throw new ConfigError("Invalid Portcullis config:\n  secret: AUTH_SECRET is required when NODE_ENV=production");
  }
  const logger = options.logger ?? pino({ level: config.logLevel, redact: ["req.headers.authorization", "req.headers.cookie"] });
  const target = parseDatabaseUrl(config.databaseUrl);
  const orm = await openOrm(target);
  if (options.migrate ?? true) await migrateUp(orm);
  const origin = new URL(config.publicUrl).origin;
  const app: App = {
    config,
    secret: config.secret ?? randomBytes(32).toString("base64url"),
    orm,
    sessions: createSessionStore(target),
    // In-process cache: on by default only for SQLite, the single-process embedded default.
    sessionCache: new SessionCache(config.session.cacheTtlMs ?? (target.dialect === "sqlite" ? 1000 : 0)),
    rateLimiter: createRateLimiter(config.rateLimit),
    mailer: createMailer(config, logger),
    logger,
    clock: config.clock,
    cookieName: `${origin.startsWith("https:") ? "__Secure-" : ""}${config.cookiePrefix}.session_token`,
    origin,
  };
  const handler = createRequestHandler(app);
  let server: ReturnType<typeof createHttpServer> | undefined;

  return {
    app,
    router: appRouter,
    createCaller: (ctxInput = {}) => callerFactory(createContext(app, { headers: {}, ...ctxInput })),
    handler,
    async listen(port = config.port, host = config.host) {
      server = createHttpServer(app);
      await new Promise<void>((resolve, reject) => {
        server!.once("error", reject);
        server!.listen(port, host, () => resolve());
      });
      const addr = server.address() as AddressInfo;
      return `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}`;
    },
    async close() {
      if (server) {
        const s = server;
        await new Promise<void>((resolve) => {
          s.close(() => resolve());
          s.closeIdleConnections();
        });
      }
      // Deferred sends still write to the database (a failed one deletes its token row).
      await app.mailer.close();
      await app.sessions.close();
      await orm.close();
    },
  };
}
