import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { App } from "../app.ts";
import { constantTimeEqual, sha256 } from "../crypto/tokens.ts";
import { AuthError } from "../errors.ts";
import { sendError } from "../../rest-bridge/errors.ts";
import { requestIdOf } from "../../rest-bridge/request-id.ts";
import type { Metrics } from "./counters.ts";

/**
 * GET {metrics.path} (default /metrics): on the service's own port, or alone on `metrics.port`
 * (keep it off the public port: the numbers describe traffic and users' outcomes). prom-client
 * is imported on the first scrape (exposition.ts). With `metrics.token`, either port asks for it.
 */

/**
 * `metrics.token` as an RFC 6750 §2.1 Bearer credential. The digests are compared, so the time
 * taken tells neither the token's bytes nor its length.
 */
function authorized(app: App, req: IncomingMessage): boolean {
  const { token } = app.config.metrics;
  if (token === undefined) return true;
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "");
  return constantTimeEqual(sha256(m?.[1] ?? ""), sha256(token));
}

/** The scrape; 401 UNAUTHORIZED (with the Bearer challenge) when `metrics.token` is set and not presented. */
export async function sendMetrics(app: App, metrics: Metrics, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!authorized(app, req)) throw new AuthError("UNAUTHORIZED", { headers: { "www-authenticate": 'Bearer realm="metrics"' } });
  const { scrape } = await import("./exposition.ts");
  const { text, contentType } = await scrape(app, metrics);
  res.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(text), "cache-control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : text);
}

/** Whether the service's own port answers `path` with the metrics (enabled, and no port of their own). */
export function servesMetricsOnMainPort(app: App, path: string, method: string | undefined): boolean {
  const { metrics } = app.config;
  return app.metrics !== undefined && metrics.port === undefined && path === metrics.path && (method === "GET" || method === "HEAD");
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/** The listener of `metrics.port` (on `metrics.host`, else the service's host): the metrics path only, 404 elsewhere. */
export async function startMetricsListener(app: App, metrics: Metrics, port: number): Promise<MetricsListener> {
  const { path, host } = app.config.metrics;
  const server: Server = createServer((req, res) => {
    const target = (req.url ?? "/").split("?")[0];
    if (target === path && (req.method === "GET" || req.method === "HEAD")) {
      sendMetrics(app, metrics, req, res).catch((err: unknown) => {
        if (err instanceof AuthError) return sendError(res, err, requestIdOf(req.headers["x-request-id"]));
        app.logger.error({ err }, "metrics scrape failed");
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
      return;
    }
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
  });
  const bindHost = host ?? app.config.host;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, bindHost, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  return {
    url: `http://${addr.address.includes(":") ? `[${addr.address}]` : addr.address}:${addr.port}${path}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
