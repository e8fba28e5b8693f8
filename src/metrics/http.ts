import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import type { Logger } from "pino";
import type { App } from "../app.ts";
import type { ResolvedConfig } from "../config/index.ts";
import { constantTimeEqual, sha256 } from "../crypto/tokens.ts";
import { AuthError } from "../errors.ts";
import { sendError } from "../../rest-bridge/errors.ts";
import { requestIdOf } from "../../rest-bridge/request-id.ts";
import type { Metrics, Scraped } from "./counters.ts";

/**
 * GET {metrics.path} (default /metrics): on the service's own port, or alone on `metrics.port`
 * (keep it off the public port: the numbers describe traffic and users' outcomes). prom-client
 * is imported on the first scrape (exposition.ts). With `metrics.token`, either port asks for it.
 */

type MetricsConfig = ResolvedConfig["metrics"];

/**
 * `metrics.token` as an RFC 6750 §2.1 Bearer credential. The digests are compared, so the time
 * taken tells neither the token's bytes nor its length.
 */
function authorized(token: string | undefined, req: IncomingMessage): boolean {
  if (token === undefined) return true;
  const m = /^Bearer +(\S+) *$/i.exec(req.headers.authorization ?? "");
  return constantTimeEqual(sha256(m?.[1] ?? ""), sha256(token));
}

/** The scrape; 401 UNAUTHORIZED (with the Bearer challenge) when `metrics.token` is set and not presented. */
async function sendScrape(scrape: () => Promise<Scraped>, token: string | undefined, req: IncomingMessage, res: ServerResponse): Promise<void> {
  if (!authorized(token, req)) throw new AuthError("UNAUTHORIZED", { headers: { "www-authenticate": 'Bearer realm="metrics"' } });
  const { text, contentType } = await scrape();
  res.writeHead(200, { "content-type": contentType, "content-length": Buffer.byteLength(text), "cache-control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : text);
}

/** This process's numbers, or in a worker of `serve --workers` the whole service's (cluster.ts). */
export function scrapeOf(app: App, metrics: Metrics): () => Promise<Scraped> {
  return metrics.whole ?? (async () => (await import("./exposition.ts")).scrape(app, metrics));
}

export function sendMetrics(app: App, metrics: Metrics, req: IncomingMessage, res: ServerResponse): Promise<void> {
  return sendScrape(scrapeOf(app, metrics), app.config.metrics.token, req, res);
}

/** Whether the service's own port answers `path` with the metrics (enabled, and no port of their own). */
export function servesMetricsOnMainPort(app: App, path: string, method: string | undefined): boolean {
  const { metrics } = app.config;
  return app.metrics !== undefined && metrics.port === undefined && path === metrics.path && (method === "GET" || method === "HEAD");
}

/**
 * The start's line about the metrics: where they are served and who may read them (the service's
 * public port or a listener of their own; a Bearer token, or anyone who reaches it), so an
 * operator never serves them to the world without being told (docs/operations.md, Metrics).
 */
export function announceMetrics(logger: Logger, settings: MetricsConfig, url: string | null): void {
  const access = settings.token !== undefined ? "Bearer token (metrics.token)" : "anyone who reaches it (no metrics.token)";
  if (url !== null) logger.info({ url, path: settings.path, access }, "metrics listening");
  else logger.info({ path: settings.path, access }, "metrics served on the service's port");
}

export interface MetricsListener {
  url: string;
  close(): Promise<void>;
}

/**
 * The listener of `metrics.port` (on `metrics.host`, else `host`): the metrics path only, 404
 * elsewhere. `serve --workers` runs it in the primary, with the workers' sum as `scrape`.
 */
export async function startMetricsListener(settings: MetricsConfig & { port: number }, host: string, scrape: () => Promise<Scraped>, logger: Logger): Promise<MetricsListener> {
  const { path, token, port } = settings;
  const server: Server = createServer((req, res) => {
    const target = (req.url ?? "/").split("?")[0];
    if (target === path && (req.method === "GET" || req.method === "HEAD")) {
      sendScrape(scrape, token, req, res).catch((err: unknown) => {
        if (err instanceof AuthError) return sendError(res, err, requestIdOf(req.headers["x-request-id"]));
        logger.error({ err }, "metrics scrape failed");
        if (!res.headersSent) res.writeHead(500).end();
        else res.destroy();
      });
      return;
    }
    res.writeHead(404, { "content-type": "text/plain; charset=utf-8" }).end("not found\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, settings.host ?? host, () => resolve());
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
