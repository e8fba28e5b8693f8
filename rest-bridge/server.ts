import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { nodeHTTPRequestHandler } from "@trpc/server/adapters/node-http";
import type { App } from "../src/app.ts";
import { AuthError } from "../src/errors.ts";
import { appRouter } from "../src/trpc/app-router.ts";
import { createContext, type Context } from "../src/trpc/context.ts";
import { createCallerFactory, toAuthError } from "../src/trpc/init.ts";
import { MAX_BODY_BYTES, parseBody, readTrpcBody, RequestAborted } from "./body.ts";
import { effectHeaders } from "./cookies.ts";
import { createCors, trpcVary } from "./cors.ts";
import { sendError, sendJson } from "./errors.ts";
import { checkLoginOrigin, checkOrigin, checkRateLimit, clientIpResolver, type ClientIpOf } from "./guards.ts";
import { serveGetSession } from "./get-session.ts";
import { leanPath, leanTargetsOf, type LeanRequest } from "./lean.ts";
import { failureToErrorPage, prefersHtml, sendHtml, sendPage } from "./html.ts";
import { createConsoleHandler } from "./console.ts";
import { createOpenApiPages } from "./openapi.ts";
import { createOutsidePages } from "./outside-pages.ts";
import { sanitisedPath } from "./log-path.ts";
import { streamNdjson, type StreamPage } from "./ndjson.ts";
import { normalisePath } from "./paths.ts";
import { createRouteMatcher, loginProcedures, restPathByProcedure, routes, type RouteMatch } from "./routes.ts";
import { answerClientError } from "./client-errors.ts";
import { nextRequestId, requestIdOf } from "./request-id.ts";
import { sendMetrics, servesMetricsOnMainPort } from "../src/metrics/http.ts";

export { nextRequestId };

export const TRPC_PATH = "/api/trpc";

const createCaller = createCallerFactory(appRouter);
type Procedure = (input?: unknown) => Promise<unknown>;

function procedureAt(caller: unknown, dotted: string): Procedure {
  return dotted.split(".").reduce<any>((node, key) => node[key], caller) as Procedure;
}

/** What one request needs besides the app: its id and how to find the client's address. */
interface Call {
  requestId: string;
  ipOf: ClientIpOf;
  /** For GET /metrics: the REST path of the procedure a tRPC call ran, the error code of a failure, an interim page. */
  route?: string;
  errorCode?: string;
  interim?: boolean;
}

async function bridge(app: App, req: IncomingMessage, res: ServerResponse, url: URL | null, match: RouteMatch, call: Call) {
  const { route, params } = match;
  const ip = call.ipOf(req);
  // Keyed on the matched route, whatever spelling of the path reached it (paths.ts).
  await checkRateLimit(app, ip, route.path);
  if (!route.navigation) checkOrigin(app, req);
  if (route.login) checkLoginOrigin(app, req);
  let input: unknown;
  if (route.input === "body" || route.input === "body+query") input = await parseBody(req, route.form === true);
  else if (route.input === "query") input = Object.fromEntries(url!.searchParams);
  else if (req.method === "POST") await parseBody(req, route.form === true); // enforce type and size anyway
  if (route.input === "body+query") input = { ...(input as object), ...Object.fromEntries(url!.searchParams) };
  if (Object.keys(params).length) input = { ...(input as object), ...params };

  // A lean path answers a hot route without the tRPC caller and its context where one exists (lean.ts).
  const leanReq: LeanRequest = { headers: req.headers, effects: { headers: {} } };
  const lean = leanPath(app, route.procedure, leanReq, input);
  const ctx = lean ? null : createContext(app, { headers: req.headers, ip, requestId: call.requestId });
  const effects = ctx ? ctx.effects : leanReq.effects;
  let output: unknown;
  try {
    output = await (lean ?? procedureAt(createCaller(ctx!), route.procedure)(input));
  } catch (err) {
    // Cookies the procedure set or cleared before it failed still go out, as tRPC's adapter sends
    // them (responseMeta): an OAuth callback that used its state up clears the state cookie.
    const cookies = effectHeaders(app, effects)["set-cookie"];
    if (cookies) res.setHeader("set-cookie", cookies);
    // docs/wire-contract.md §9: a browser sent back from a provider gets a page, a program keeps JSON.
    if (!route.errorPage || !prefersHtml(req.headers.accept)) throw err;
    call.errorCode = toAuthError(err).authCode;
    return failureToErrorPage(app, res, err, call.requestId);
  }
  const headers = effectHeaders(app, effects);
  if (effects.failure) call.errorCode = effects.failure;
  if (effects.redirect) {
    res.writeHead(302, { ...headers, location: effects.redirect, "cache-control": "no-store" });
    res.end();
    return;
  }
  if (effects.page) {
    call.interim = true;
    return sendPage(res, effects.page, headers);
  }
  if (route.html) return sendHtml(res, String(output), headers);
  if (route.ndjson) return streamNdjson(res, headers, output as StreamPage, (cursor) => procedureAt(createCaller(ctx!), route.procedure)({ ...(input as object), cursor }) as Promise<StreamPage>);
  sendJson(res, effects.status ?? 200, output ?? null, headers);
}

/** Resolves when the response is finished or its connection is gone, whichever comes first. */
function closed(res: ServerResponse): Promise<void> {
  if (res.closed) return Promise.resolve();
  return new Promise((resolve) => res.once("close", () => resolve()));
}

/** `procedures`: the normalised path below /api/trpc (paths.ts), e.g. `signIn.email`. */
async function trpc(app: App, req: IncomingMessage, res: ServerResponse, procedures: string, call: Call) {
  call.route = restPathByProcedure.get(procedures);
  const refused = await readTrpcBody(req);
  let ctx: Context | undefined;
  const handled = nodeHTTPRequestHandler({
    req,
    res,
    // The adapter decodes the path once more: re-encoded, it sees exactly the normalised one.
    path: encodeURIComponent(procedures),
    router: appRouter,
    maxBodySize: MAX_BODY_BYTES,
    allowBatching: false,
    ...(refused ? { middleware: (_req, _res, next) => next(refused) } : {}),
    createContext: async ({ info }) => {
      const ip = call.ipOf(req);
      // Limits and login CSRF follow the procedures tRPC resolved: once per call of a batch.
      // Unknown names (404) share one key, so they cannot mint counters without end.
      for (const { path, procedure } of info.calls) {
        await checkRateLimit(app, ip, procedure ? (restPathByProcedure.get(path) ?? `/trpc/${path}`) : "/trpc");
      }
      checkOrigin(app, req);
      if (info.calls.some(({ path }) => loginProcedures.has(path))) checkLoginOrigin(app, req);
      ctx = createContext(app, { headers: req.headers, ip, requestId: call.requestId });
      return ctx;
    },
    responseMeta: ({ errors }) => {
      const retry = errors.map((e) => (e instanceof AuthError ? e.headers : e.cause instanceof AuthError ? e.cause.headers : undefined)).find(Boolean);
      // Every answer is JSON; errors tRPC raises before calling a procedure (no content-type,
      // batching, a guard in createContext) would otherwise go out as text/plain.
      const json = { "content-type": "application/json" };
      return { headers: { ...json, ...trpcVary(res), ...(ctx ? effectHeaders(app, ctx.effects) : {}), ...(retry ?? {}) } };
    },
    onError: ({ error }) => {
      const auth = toAuthError(error);
      call.errorCode = auth.authCode;
      if (auth.authCode === "INTERNAL_SERVER_ERROR") app.logger.error({ requestId: call.requestId, err: error.cause ?? error }, "unexpected failure");
    },
  });
  await Promise.race([handled, closed(res)]);
  if (!res.writableEnded) throw new RequestAborted("the client closed the connection before the answer");
}

/** The node:http handler: /api/trpc → tRPC adapter, {basePath} → the REST bridge. */
export function createRequestHandler(app: App) {
  const matchRoute = createRouteMatcher(routes);
  const ipOf = clientIpResolver(app.config.trustProxy);
  const base = app.config.basePath;
  const outsidePage = createOutsidePages(app); // favicon, device page, the OpenID provider's pages (rest-bridge/outside-pages.ts)
  const adminConsole = createConsoleHandler(app);
  const getSessionTarget = `${base}/get-session`;
  const cors = createCors(app, TRPC_PATH); // trustedOrigins (rest-bridge/cors.ts)
  const openApi = createOpenApiPages(app, ipOf); // {base}/openapi.json and {base}/reference (rest-bridge/openapi.ts)

  const metrics = app.metrics;
  /** The hot path's own stats object: counting a get-session is a few integer adds, no lookup. */
  const getSessionStats = metrics?.route("/get-session");

  /** Route pattern only: paths and queries may carry tokens. Nothing is built when the level is off. */
  function logRequest(req: IncomingMessage, res: ServerResponse, requestId: string, label: string, started: number, aborted: boolean) {
    app.tracing?.routed(res, label);
    if (!app.logger.isLevelEnabled("info")) return;
    // A client that left gets nginx's 499 "client closed request": its own doing, never a 5xx of ours.
    const status = aborted ? 499 : res.statusCode;
    // An unmatched path is logged, sanitised (log-path.ts): what probes and broken links ask for.
    app.logger.info({ requestId, method: req.method, route: label, ...(label === "unmatched" ? { path: sanitisedPath(req.url) } : {}), status, durationMs: Math.round(performance.now() - started), ...(aborted ? { aborted } : {}) }, "request");
  }

  /** The get-session fast path's end: counted (when metrics are on) and logged. */
  function gotSession(req: IncomingMessage, res: ServerResponse, requestId: string, started: number, aborted: boolean) {
    getSessionStats?.observe(aborted ? 499 : res.statusCode, performance.now() - started);
    logRequest(req, res, requestId, "/get-session", started, aborted);
  }

  /** Answers a failure; true when the client had left (logged as 499). */
  function fail(res: ServerResponse, err: unknown, requestId: string): boolean {
    if (err instanceof RequestAborted) {
      res.destroy();
      return true;
    }
    const auth = toAuthError(err);
    if (auth.authCode === "INTERNAL_SERVER_ERROR") app.logger.error({ requestId, err: auth.cause }, "unexpected failure");
    if (!res.headersSent) {
      res.setHeader("x-request-id", requestId);
      sendError(res, auth, requestId);
    } else res.destroy();
    return false;
  }

  /** The hot path (get-session.ts): the exact target only; any other spelling takes the general route. */
  function getSession(req: IncomingMessage, res: ServerResponse, requestId: string): Promise<void> | undefined {
    const started = performance.now();
    try {
      const pending = serveGetSession(app, req, res, ipOf, requestId);
      if (!pending) {
        gotSession(req, res, requestId, started, false);
        return undefined;
      }
      return pending.then(
        () => gotSession(req, res, requestId, started, false),
        (err: unknown) => gotSession(req, res, requestId, started, fail(res, err, requestId)),
      );
    } catch (err) {
      gotSession(req, res, requestId, started, fail(res, err, requestId));
      return undefined;
    }
  }

  const leanTargets = leanTargetsOf(base, matchRoute); // lean.ts: exact targets, matched once

  async function general(req: IncomingMessage, res: ServerResponse, requestId: string, lean?: RouteMatch) {
    const started = performance.now();
    res.setHeader("x-request-id", requestId);
    const call: Call = { requestId, ipOf };
    let label = "unmatched";
    let outside: string | null;
    let aborted = false;
    try {
      if (lean) {
        label = lean.route.path;
        await bridge(app, req, res, null, lean, call);
        return;
      }
      // Origin-form targets are paths: "//x/y" is the path //x/y, never a host (new URL(target, base) would throw on "//%7B").
      const target = req.url ?? "/";
      const url = target.startsWith("/") ? new URL(`http://localhost${target}`) : URL.canParse(target) ? new URL(target) : null;
      // Routing, limits and guards all see this one spelling of the path.
      const path = url && normalisePath(url.pathname);
      if (!url || !path) throw new AuthError("NOT_FOUND");
      if (path === TRPC_PATH || path.startsWith(`${TRPC_PATH}/`)) {
        label = "trpc";
        await trpc(app, req, res, path.slice(TRPC_PATH.length + 1), call);
      } else if ((outside = outsidePage(req, res, path)) !== null) {
        label = outside;
      } else if (adminConsole?.matches(path)) {
        label = "admin-console";
        adminConsole.serve(req, res, path);
      } else if (openApi.serves(path)) {
        label = path.slice(base.length);
        await openApi.serve(req, res, path);
      } else if (metrics && servesMetricsOnMainPort(app, path, req.method)) {
        label = "metrics"; // src/metrics (off unless metrics.enabled; metrics.port moves it off this port)
        await sendMetrics(app, metrics, req, res);
      } else {
        const rel = path.startsWith(`${base}/`) ? path.slice(base.length) : null;
        // HEAD on the health routes (probes); every other route keeps its one method.
        const method = req.method === "HEAD" && (rel === "/ok" || rel === "/ready") ? "GET" : (req.method ?? "GET");
        const match = rel === null ? null : matchRoute(method, rel);
        if (!match) throw new AuthError("NOT_FOUND");
        label = match.route.path;
        await bridge(app, req, res, url, match, call);
      }
    } catch (err) {
      aborted = fail(res, err, requestId);
      call.errorCode ??= err instanceof RequestAborted ? undefined : toAuthError(err).authCode;
    } finally {
      metrics?.request(label, aborted ? 499 : res.statusCode, performance.now() - started, call);
      logRequest(req, res, requestId, label, started, aborted);
    }
  }

  const handle = function handle(req: IncomingMessage, res: ServerResponse): Promise<void> | undefined {
    // The caller's X-Request-Id when sane, else ours (request-id.ts); every answer carries it back.
    const requestId = requestIdOf(req.headers["x-request-id"]);
    // Only requests with an Origin (browsers' cross-origin ones) pay for CORS; a preflight ends here.
    const origin = req.headers.origin;
    if (origin !== undefined) {
      res.setHeader("x-request-id", requestId);
      if (cors(req, res, origin)) return undefined;
    }
    if (req.url === getSessionTarget && req.method === "GET") return getSession(req, res, requestId);
    const lean = leanTargets.get(req.url!);
    return general(req, res, requestId, lean?.route.method === req.method ? lean : undefined);
  };
  return app.tracing ? app.tracing.wrapHandler(handle) : handle; // src/tracing: off, nothing wraps
}

/** The service's server; given one already listening (the CLI's start-up stand-in), it answers there instead. */
export function createHttpServer(app: App, server: Server = createServer()): Server {
  const handle = createRequestHandler(app);
  server.removeAllListeners("request");
  server.on("request", (req: IncomingMessage, res: ServerResponse) => {
    // Stopping (src/index.ts drain): this answer is the connection's last.
    if (!server.listening) res.setHeader("connection", "close");
    void handle(req, res);
  });
  server.removeAllListeners("clientError");
  server.on("clientError", (err, socket) => answerClientError(app, err, socket));
  server.keepAliveTimeout = 5000;
  return server;
}
