import cluster, { type Worker } from "node:cluster";
import { availableParallelism } from "node:os";
import type { Logger } from "pino";
import { onStopSignals } from "./cli/stop-signals.ts";
import { ConfigError } from "./config/index.ts";
import { relayInvalidations } from "./core/session/invalidation.ts";

/**
 * `serve --workers N` (or PORTCULLIS_WORKERS): N processes of node:cluster sharing one port.
 * The primary applies migrations once, forks the workers, relays their session-cache evictions
 * (IPC; on PostgreSQL each worker also listens itself), restarts a worker that dies, and on
 * SIGTERM/SIGINT lets every worker drain. Worker 0 runs the sweeper.
 */
export const WORKER_INDEX_ENV = "PORTCULLIS_WORKER_INDEX";

/** "auto" = the cores this process may use; a number as given; absent = 1 (no cluster). */
export function parseWorkers(raw: string | undefined): number {
  if (raw === undefined || raw === "") return 1;
  if (raw === "auto") return availableParallelism();
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new ConfigError(`--workers must be a whole number from 1 to 256, or "auto"; got ${raw}`);
  return n;
}

export function workerIndex(): number | null {
  return cluster.isWorker ? Number(process.env[WORKER_INDEX_ENV] ?? 0) : null;
}

/** A worker that dies this soon after its start is not restarted (a start-up failure would loop). */
const MIN_UPTIME_MS = 5000;

/** IPC between a worker whose service is built and the primary: "may I listen?", and "listen". */
const LISTEN_IPC = "portcullis:listen";

/**
 * A worker, its service built: waits for the primary's word before it listens. The primary's
 * start-up responder holds the port until a worker is this far (cli/startup-responder.ts), so
 * the port is closed only while the first worker binds, not for a worker's whole start.
 */
export function clearToListen(): Promise<void> {
  return new Promise((resolve) => {
    const onMessage = (msg: unknown) => {
      if ((msg as { type?: unknown } | null)?.type !== LISTEN_IPC) return;
      process.off("message", onMessage);
      resolve();
    };
    process.on("message", onMessage);
    process.send?.({ type: LISTEN_IPC });
  });
}

/** `prepare` (migrations) may leave the port held: it returns how to let go of it, which the first built worker's question calls. */
export async function runPrimary(workers: number, logger: Logger, prepare: () => Promise<(() => Promise<void>) | undefined>): Promise<void> {
  const release = await prepare();
  let released: Promise<void> | undefined;
  cluster.on("message", (worker: Worker, msg: unknown) => {
    if ((msg as { type?: unknown } | null)?.type !== LISTEN_IPC) return;
    released ??= release ? release() : Promise.resolve();
    void released.then(() => worker.isConnected() && worker.send({ type: LISTEN_IPC }));
  });
  relayInvalidations();
  // The workers share the cores: each hashes passwords on its share of them (bin/portcullis.cjs
  // sized this process's pool to all of them; an operator's own UV_THREADPOOL_SIZE is left alone).
  const poolEnv = process.env.PORTCULLIS_AUTO_POOL === "1" ? { UV_THREADPOOL_SIZE: String(Math.max(1, Math.floor(availableParallelism() / workers))) } : {};
  let stopping = false;
  const started = new Map<Worker, number>();
  const fork = (index: number) => {
    const worker = cluster.fork({ [WORKER_INDEX_ENV]: String(index), ...poolEnv });
    started.set(worker, Date.now());
    worker.on("exit", (code, signal) => {
      const uptime = Date.now() - (started.get(worker) ?? 0);
      started.delete(worker);
      if (stopping) return;
      if (uptime < MIN_UPTIME_MS) {
        logger.error({ worker: index, code, signal }, "worker failed at start; stopping");
        void stop(1);
        return;
      }
      logger.warn({ worker: index, code, signal }, "worker died; starting another");
      fork(index);
    });
  };
  const stop = async (exitCode: number) => {
    if (stopping) return;
    stopping = true;
    const alive = [...started.keys()];
    await Promise.all(
      alive.map((w) => new Promise<void>((resolve) => {
        if (w.isDead()) return resolve();
        w.once("exit", () => resolve());
        w.process.kill("SIGTERM");
      })),
    );
    process.exit(exitCode);
  };
  onStopSignals(
    () => void stop(0),
    () => process.exit(1),
  );
  for (let i = 0; i < workers; i++) fork(i);
  logger.info({ workers }, "portcullis cluster started");
}
