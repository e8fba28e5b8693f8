import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { nodeHTTPRequestHandler } from "@trpc/server/adapters/node-http";
import type { App } from "../src/app.ts";
import { AuthError } from "../src/errors.ts";
import { sendDevicePage } from "../src/modules/device/device.page.ts";
import { devicePagePath } from "../src/modules/device/device.rules.ts";
import { appRouter } from "../src/trpc/app-router.ts";
import { createContext, type Context } from "../src/trpc/context.ts";
import { createCallerFactory, toAuthError } from "../src/trpc/init.ts";
import { MAX_BODY_BYTES, parseBody } from "./body.ts";
import { effectHeaders } from "./cookies.ts";
import { sendError, sendJson } from "./errors.ts";
import { checkOrigin, checkRateLimit, clientIp } from "./guards.ts";
import { createRouteMatcher, restPathByProcedure, routes, type RouteMatch } from "./routes.ts";

export const TRPC_PATH = "/api/trpc";

const createCaller = createCallerFactory(appRouter);
type Procedure = (input?: unknown) => Promise<unknown>;

function procedureAt(caller: unknown, dotted: string): Procedure {
  return dotted.split(".").reduce<any>((node, key) => node[key], caller) as Procedure;
}

async function bridge(app: App, req: IncomingMessage, res: ServerResponse, url: URL, match: RouteMatch, requestId: string) {
  const { route, params } = match;
  const ip = clientIp(app, req);
  await checkRateLimit(app, ip, route.path);
  checkOrigin(app, req);
  let input: unknown;
  if (route.input === "body") input = await parseBody(req, route.form === true);
  else if (route.input === "query") input = Object.fromEntries(url.searchParams);
  else if (req.method === "POST") await parseBody(req, route.form === true); // enforce type and size anyway
  if (Object.keys(params).length) input = { ...(input as object), ...params };

  const ctx = createContext(app, { headers: req.headers, ip, requestId });
  const output = await procedureAt(createCaller(ctx), route.procedure)(input);
  const headers = effectHeaders(app, ctx.effects);
  if (ctx.effects.redirect) {
    res.writeHead(302, { ...headers, location: ctx.effects.redirect, "cache-control": "no-store" });
    res.end();
    return;
  }
  sendJson(res, 200, output ?? null, headers);
}

function trpc(app: App, req: IncomingMessage, res: ServerResponse, url: URL, requestId: string) {
  const path = url.pathname.slice(TRPC_PATH.length + 1);
  let ctx: Context | undefined;
  return nodeHTTPRequestHandler({
    req,
    res,
    path,
    router: appRouter,
    maxBodySize: MAX_BODY_BYTES,
    allowBatching: false,
    createContext: async ({ req }) => {
      const ip = clientIp(app, req);
      await checkRateLimit(app, ip, restPathByProcedure.get(path) ?? `/trpc/${path}`);
      checkOrigin(app, req);
      ctx = createContext(app, { headers: req.headers, ip, requestId });
      return ctx;
    },
    responseMeta: ({ errors }) => {
      const retry = errors.map((e) => (e instanceof AuthError ? e.headers : e.cause instanceof AuthError ? e.cause.headers : undefined)).find(Boolean);
      // Every answer is JSON; errors tRPC raises before calling a procedure (no content-type,
      // batching, a guard in createContext) would otherwise go out as text/plain.
      const json = { "content-type": "application/json" };
      return { headers: { ...json, ...(ctx ? effectHeaders(app, ctx.effects) : {}), ...(retry ?? {}) } };
    },
    onError: ({ error }) => {
      const auth = toAuthError(error);
      if (auth.authCode === "INTERNAL_SERVER_ERROR") app.logger.error({ requestId, err: error.cause ?? error }, "unexpected failure");
    },
  });
}

/** The node:http handler: /api/trpc → tRPC adapter, {basePath} → the REST bridge. */
export function createRequestHandler(app: App) {
  const matchRoute = createRouteMatcher(routes);
  const base = app.config.basePath;
  const devicePage = devicePagePath(app.config);
  return async function handle(req: IncomingMessage, res: ServerResponse) {
    const started = performance.now();
    const requestId = randomUUID();
    let label = "unmatched";
    try {
      // Origin-form targets are paths: "//x/y" is the path //x/y, never a host (new URL(target, base) would throw on "//%7B").
      const target = req.url ?? "/";
      const url = target.startsWith("/") ? new URL(`http://localhost${target}`) : URL.canParse(target) ? new URL(target) : null;
      if (!url) throw new AuthError("NOT_FOUND");
      if (url.pathname === TRPC_PATH || url.pathname.startsWith(`${TRPC_PATH}/`)) {
        label = "trpc";
        await trpc(app, req, res, url, requestId);
      } else if (url.pathname === devicePage && req.method === "GET") {
        label = "device-page"; // RFC 8628 §3.3 verification URI, outside the base path
        sendDevicePage(app, res);
      } else {
        const match = url.pathname.startsWith(`${base}/`) ? matchRoute(req.method ?? "GET", url.pathname.slice(base.length)) : null;
        if (!match) throw new AuthError("NOT_FOUND");
        label = match.route.path;
        await bridge(app, req, res, url, match, requestId);
      }
    } catch (err) {
      const auth = toAuthError(err);
      if (auth.authCode === "INTERNAL_SERVER_ERROR") app.logger.error({ requestId, err: auth.cause }, "unexpected failure");
      if (!res.headersSent) sendError(res, auth, requestId);
      else res.destroy();
    } finally {
      // Route pattern only: paths and queries may carry tokens.
      app.logger.info({ requestId, method: req.method, route: label, status: res.statusCode, durationMs: Math.round(performance.now() - started) }, "request");
    }
  };
}

export function createHttpServer(app: App): Server {
  const handle = createRequestHandler(app);
  const server = createServer((req, res) => {
    // Stopping (src/index.ts drain): this answer is the connection's last.
    if (!server.listening) res.setHeader("connection", "close");
    void handle(req, res);
  });
  server.keepAliveTimeout = 5000;
  return server;
}
