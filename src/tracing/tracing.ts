import type { IncomingMessage, ServerResponse } from "node:http";
import { context, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { resourceFromAttributes } from "@opentelemetry/resources";
import { BasicTracerProvider, BatchSpanProcessor, ConsoleSpanExporter, SimpleSpanProcessor, type SpanExporter, type SpanProcessor } from "@opentelemetry/sdk-trace-base";
import type { SessionStore } from "../db/session-store/index.ts";
import type { TracedParts, Tracing, TracingOptions } from "./types.ts";

/**
 * The SDK side of src/tracing (index.ts decides whether it loads). Spans: the request (SERVER: `http.request.method`,
 * `http.route`, `http.response.status_code`), the procedure (`rpc.method`, `enduser.id` once the
 * caller is known), the database (`db.system.name`, `db.operation.name`, `db.collection.name`,
 * the statement with its placeholders: values are never in it, so neither are tokens). Parents
 * flow through an AsyncLocalStorage context manager, enabled only when tracing is on (Node 20:
 * it switches promise hooks on for the process, docs/performance.md).
 */

async function exporterFor(name: string): Promise<SpanExporter> {
  if (name === "console") return new ConsoleSpanExporter();
  if (name === "otlp") {
    // OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT / _HEADERS are read by the exporter itself (http/protobuf).
    const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
    return new OTLPTraceExporter();
  }
  throw new Error(`OTEL_TRACES_EXPORTER: "${name}" is not supported here (otlp, console or none)`);
}

let contextManager: AsyncLocalStorageContextManager | undefined;
/** One context manager per process, enabled by the first traced instance (tests run several). */
function enableContext(): void {
  if (contextManager) return;
  contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
}

/** The first keyword and the table a statement names; string literals out (the text is an attribute). */
function describeSql(sql: string): { operation: string; table: string | undefined; text: string } {
  const text = sql.replace(/'(?:[^']|'')*'/g, "'?'").slice(0, 2000);
  const operation = /^\s*(\w+)/.exec(text)?.[1]?.toUpperCase() ?? "QUERY";
  const table = /\b(?:from|into|update|join)\s+[`"]?([\w.]+)[`"]?/i.exec(text)?.[1];
  return { operation, table, text };
}

function tracedStore(store: SessionStore, tracer: Tracer, system: string): SessionStore {
  const traced = { ...store } as Record<string, unknown>;
  for (const [name, fn] of Object.entries(store)) {
    if (typeof fn !== "function" || name === "close" || name === "poolStats") continue;
    traced[name] = (...args: unknown[]) => {
      const parent = context.active();
      if (!trace.getSpan(parent)) return (fn as (...a: unknown[]) => unknown).apply(store, args);
      const span = tracer.startSpan(`db ${name}`, { kind: SpanKind.CLIENT, attributes: { "db.system.name": system, "db.operation.name": name } }, parent);
      try {
        const out = (fn as (...a: unknown[]) => unknown).apply(store, args);
        if (out instanceof Promise) {
          return out.then(
            (v) => (span.end(), v),
            (err: unknown) => {
              span.setStatus({ code: SpanStatusCode.ERROR });
              span.end();
              throw err;
            },
          );
        }
        span.end();
        return out;
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
        throw err;
      }
    };
  }
  return traced as unknown as SessionStore;
}

export async function createTracing(parts: TracedParts, options: TracingOptions | undefined, names: string[]): Promise<{ tracing: Tracing; sessions: SessionStore }> {
  const processors: SpanProcessor[] = [];
  if (options) processors.push(options.simple ? new SimpleSpanProcessor(options.exporter as SpanExporter) : new BatchSpanProcessor(options.exporter as SpanExporter));
  for (const name of names) {
    const exporter = await exporterFor(name);
    processors.push(name === "console" ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter));
  }
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ "service.name": process.env.OTEL_SERVICE_NAME || "portcullis" }),
    spanProcessors: processors,
  });
  const tracer = provider.getTracer("portcullis");
  enableContext();
  const system = parts.dialect === "sqlite" ? "sqlite" : "postgresql";

  // Every ORM query: MikroORM reports each one when it ends, with its time, in the caller's context.
  const logger = parts.orm.config.getLogger();
  const logQuery = logger.logQuery.bind(logger);
  logger.logQuery = (ctx) => {
    logQuery(ctx);
    const parent = context.active();
    if (!trace.getSpan(parent) || typeof ctx.query !== "string") return;
    const { operation, table, text } = describeSql(ctx.query);
    const attributes: Attributes = { "db.system.name": system, "db.operation.name": operation, "db.query.text": text };
    if (table) attributes["db.collection.name"] = table;
    const end = Date.now();
    const span = tracer.startSpan(`${operation}${table ? ` ${table}` : ""}`, { kind: SpanKind.CLIENT, attributes, startTime: end - (ctx.took ?? 0) }, parent);
    if (ctx.level === "error") span.setStatus({ code: SpanStatusCode.ERROR });
    span.end(end);
  };

  const spans = new WeakMap<ServerResponse, { span: Span; method: string }>();
  const tracing: Tracing = {
    wrapHandler(handle) {
      const wrapped = (req: IncomingMessage, res: ServerResponse) => {
        const method = req.method ?? "GET";
        const span = tracer.startSpan(method, { kind: SpanKind.SERVER, attributes: { "http.request.method": method } }, ROOT_CONTEXT);
        spans.set(res, { span, method });
        // Ends once the answer is gone and the handler is done (it names the route last, with the log line).
        let pending = 2;
        const finish = () => {
          if (--pending > 0) return;
          const status = res.writableFinished ? res.statusCode : 499;
          span.setAttribute("http.response.status_code", status);
          if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
          span.end();
        };
        res.once("close", finish);
        const out = context.with(trace.setSpan(ROOT_CONTEXT, span), () => handle(req, res));
        if (out) out.then(finish, finish);
        else finish();
        return out;
      };
      return wrapped as typeof handle;
    },
    routed(res, route) {
      const entry = spans.get(res);
      if (!entry) return;
      entry.span.setAttribute("http.route", route);
      entry.span.updateName(`${entry.method} ${route}`);
    },
    procedure(path, type, run, userId) {
      return tracer.startActiveSpan(`${type} ${path}`, { attributes: { "rpc.system": "trpc", "rpc.method": path } }, async (span) => {
        try {
          const result = await run();
          const ok = (result as { ok?: boolean } | undefined)?.ok;
          if (ok === false) {
            const error = (result as { error?: { code?: string; cause?: { authCode?: string } } }).error;
            span.setAttribute("portcullis.error_code", String(error?.cause?.authCode ?? (error as { authCode?: string } | undefined)?.authCode ?? error?.code ?? "ERROR"));
          }
          const user = userId();
          if (user) span.setAttribute("enduser.id", user);
          return result;
        } finally {
          span.end();
        }
      });
    },
    shutdown: () => provider.shutdown(),
  };
  return { tracing, sessions: tracedStore(parts.sessions, tracer, system) };
}
