import cluster, { type Worker } from "node:cluster";
import type { App } from "../app.ts";
import type { Metrics, Scraped } from "./counters.ts";

/**
 * `serve --workers N`: each worker counts the requests it answers, and one scrape must report the
 * whole service, whichever process it reaches (node:cluster hands connections out in turn, on
 * metrics.port too). The primary asks every worker that said it counts for its samples
 * (prom-client's getMetricsAsJSON) and adds them up with AggregatorRegistry.aggregate, each metric
 * by its `aggregator` (a sum for ours). A scrape on the service's port asks the primary for that
 * sum; metrics.port is the primary's own listener. Loaded only with metrics on.
 */

const IPC_TYPE = "portcullis:metrics";
/**
 * A worker that has not answered by then (stuck, or dying) fails the scrape: the sum without
 * its counts would read as a counter reset to Prometheus.
 */
const COLLECT_TIMEOUT_MS = 3000;

type Ipc =
  | { type: typeof IPC_TYPE; kind: "ready" }
  | { type: typeof IPC_TYPE; kind: "collect"; id: number }
  | { type: typeof IPC_TYPE; kind: "part"; id: number; metrics?: unknown[]; error?: string }
  | { type: typeof IPC_TYPE; kind: "scrape"; id: number }
  | { type: typeof IPC_TYPE; kind: "scraped"; id: number; text?: string; contentType?: string; error?: string };

const ours = (m: unknown): m is Ipc => (m as Ipc | undefined)?.type === IPC_TYPE;
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** A worker's half: answers the primary's collections, and makes `metrics.whole` ask the primary. */
export async function joinClusterMetrics(app: App, metrics: Metrics): Promise<{ close(): void }> {
  const registry = (await import("./exposition.ts")).registryOf(app, metrics);
  const waiting = new Map<number, { resolve(s: Scraped): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
  let next = 0;
  const onMessage = (msg: unknown) => {
    if (!ours(msg)) return;
    if (msg.kind === "collect") {
      registry.getMetricsAsJSON().then(
        (samples) => process.send?.({ type: IPC_TYPE, kind: "part", id: msg.id, metrics: samples } satisfies Ipc),
        (err: unknown) => process.send?.({ type: IPC_TYPE, kind: "part", id: msg.id, error: errorText(err) } satisfies Ipc),
      );
    } else if (msg.kind === "scraped") {
      const wait = waiting.get(msg.id);
      if (!wait) return;
      waiting.delete(msg.id);
      clearTimeout(wait.timer);
      if (msg.text === undefined || msg.contentType === undefined) wait.reject(new Error(`the cluster's metrics: ${msg.error ?? "no answer"}`));
      else wait.resolve({ text: msg.text, contentType: msg.contentType });
    }
  };
  process.on("message", onMessage);
  metrics.whole = () =>
    new Promise<Scraped>((resolve, reject) => {
      const id = next++;
      const timer = setTimeout(() => {
        waiting.delete(id);
        reject(new Error("the cluster's metrics: the primary did not answer"));
      }, COLLECT_TIMEOUT_MS * 2);
      waiting.set(id, { resolve, reject, timer });
      process.send?.({ type: IPC_TYPE, kind: "scrape", id } satisfies Ipc);
    });
  process.send?.({ type: IPC_TYPE, kind: "ready" } satisfies Ipc);
  return { close: () => process.off("message", onMessage) };
}

interface Collection {
  pending: Set<Worker>;
  parts: unknown[][];
  finish(err: Error | null): void;
}

/** The primary's half, set up before the workers are forked: the sum of every counting worker's numbers. */
export async function aggregateWorkers(): Promise<() => Promise<Scraped>> {
  const { AggregatorRegistry } = await import("prom-client");
  const counting = new Set<Worker>();
  const collections = new Map<number, Collection>();
  let next = 0;

  const collect = () =>
    new Promise<Scraped>((resolve, reject) => {
      const id = next++;
      const pending = new Set([...counting].filter((w) => w.isConnected()));
      const timer = setTimeout(() => collection.finish(new Error("a worker did not send its metrics in time")), COLLECT_TIMEOUT_MS);
      const collection: Collection = {
        pending,
        parts: [],
        finish(err) {
          if (!collections.delete(id)) return;
          clearTimeout(timer);
          if (err) return reject(err);
          const sum = AggregatorRegistry.aggregate(collection.parts as never);
          sum.metrics().then((text) => resolve({ text, contentType: sum.contentType }), reject);
        },
      };
      collections.set(id, collection);
      if (pending.size === 0) return collection.finish(null);
      for (const w of pending) w.send({ type: IPC_TYPE, kind: "collect", id } satisfies Ipc);
    });

  cluster.on("message", (worker: Worker, msg: unknown) => {
    if (!ours(msg)) return;
    if (msg.kind === "ready") counting.add(worker);
    else if (msg.kind === "scrape") {
      collect().then(
        (s) => worker.isConnected() && worker.send({ type: IPC_TYPE, kind: "scraped", id: msg.id, ...s } satisfies Ipc),
        (err: unknown) => worker.isConnected() && worker.send({ type: IPC_TYPE, kind: "scraped", id: msg.id, error: errorText(err) } satisfies Ipc),
      );
    } else if (msg.kind === "part") {
      const c = collections.get(msg.id);
      if (!c || !c.pending.delete(worker)) return;
      if (msg.metrics === undefined) return c.finish(new Error(`a worker could not read its metrics: ${msg.error ?? "no reason given"}`));
      c.parts.push(msg.metrics);
      if (c.pending.size === 0) c.finish(null);
    }
  });
  // A worker gone is not waited for: its successor starts counting from zero, as after a restart.
  cluster.on("exit", (worker: Worker) => {
    counting.delete(worker);
    for (const c of collections.values()) if (c.pending.delete(worker) && c.pending.size === 0) c.finish(null);
  });
  return collect;
}
