import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { ResolvedConfig } from "../config/index.ts";
import { AuthError, errorBody } from "../errors.ts";
import { requestIdOf } from "../../rest-bridge/request-id.ts";

/**
 * Holds the port while `serve` applies migrations before it serves: liveness ({base}/ok) answers
 * 200, so an orchestrator does not kill a process busy with a long migration; readiness
 * ({base}/ready) and everything else answer 503 NOT_READY with Retry-After, so no traffic is
 * routed to it yet. Once the service is built it takes this very socket over (handOver), so a
 * probe never meets a closed port between the two; close() is for a start that fails.
 */
export interface StartupResponder {
  /** Stops answering and gives up the listening server, for the service's handler to take. */
  handOver(): Server;
  close(): Promise<void>;
}

const RETRY_AFTER_SEC = "5";

function answer(base: string, req: IncomingMessage, res: ServerResponse): void {
  const requestId = requestIdOf(req.headers["x-request-id"]);
  const path = (req.url ?? "/").split("?")[0];
  const health = req.method === "GET" || req.method === "HEAD";
  const live = health && path === `${base}/ok`;
  const body = JSON.stringify(live ? { ok: true } : errorBody(new AuthError("NOT_READY"), requestId));
  res.writeHead(live ? 200 : 503, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(body),
    "cache-control": "no-store",
    "x-request-id": requestId,
    ...(live ? {} : { "retry-after": RETRY_AFTER_SEC }),
  });
  res.end(body);
}

/** Listens on the service's host and port (a port in use fails here, before any migration runs). */
export async function startStartupResponder(config: ResolvedConfig): Promise<StartupResponder> {
  const handler = (req: IncomingMessage, res: ServerResponse) => answer(config.basePath, req, res);
  const server = createServer(handler);
  server.keepAliveTimeout = 1000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.port, config.host, () => resolve());
  });
  return {
    handOver: () => {
      server.off("request", handler);
      return server;
    },
    // The port is free at once; answers under way finish (they take microseconds), and kept-alive
    // connections are closed once idle, or after a second.
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        setTimeout(() => server.closeAllConnections(), 1000).unref();
      }),
  };
}
