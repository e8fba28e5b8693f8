import type { IncomingMessage, ServerResponse } from "node:http";
import type { MikroORM } from "@mikro-orm/core";
import type { Logger } from "pino";
import type { SessionStore } from "../db/session-store/index.ts";
import type { Dialect } from "../db/target.ts";

/**
 * OpenTelemetry tracing (docs/operations.md "Tracing"): off unless `OTEL_TRACES_EXPORTER` names
 * an exporter (`otlp`, `console`), or an embedder passes one. Off, nothing of it is loaded and
 * the request path pays one property check; on, ./tracing.ts loads the SDK.
 */
export interface Tracing {
  /** The request handler, each request a SERVER span (method, route, status; never the path or query). */
  wrapHandler<H extends (req: IncomingMessage, res: ServerResponse) => Promise<void> | undefined>(handle: H): H;
  /** The route label the bridge matched, for the request's span. */
  routed(res: ServerResponse, route: string): void;
  /** A procedure's span, active while it runs: its database spans are its children. */
  procedure<T>(path: string, type: string, run: () => Promise<T>, userId: () => string | null | undefined): Promise<T>;
  /** Flushes and stops the exporter. */
  shutdown(): Promise<void>;
}

/** What an embedder (or a test) hands over instead of the environment: an exporter of `@opentelemetry/sdk-trace-base` (e.g. InMemorySpanExporter). */
export interface TracingOptions {
  exporter: unknown;
  /** Export each span as it ends (tests); default: batched, as in production. */
  simple?: boolean;
}

export interface TracedParts {
  orm: MikroORM;
  sessions: SessionStore;
  dialect: Dialect;
  logger: Logger;
}
