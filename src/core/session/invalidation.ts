import cluster from "node:cluster";
import { randomUUID } from "node:crypto";
import type PgType from "pg";
import { loadPackage } from "../../load.ts";
import type { Logger } from "pino";
import type { Invalidation, SessionCache } from "./cache.ts";

/**
 * How instances sharing one database tell each other what their session caches must forget
 * (docs/performance.md, the session cache). PostgreSQL: LISTEN/NOTIFY on one channel, each instance its own listening
 * connection. `serve --workers N` on SQLite: the cluster's IPC, relayed by the primary. A
 * single process on SQLite needs neither.
 *
 * While the channel is down the cache is off (notifications sent meanwhile are lost): it is
 * emptied and stores nothing until the channel is back.
 */
export interface InvalidationChannel {
  readonly kind: "postgres" | "cluster" | "none";
  /** Resolves once every eviction published so far has left this instance (NOTIFY committed). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

export const CHANNEL = "portcullis_sessions";
/** Name of the listening connection in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = "portcullis-session-invalidation";
/** IPC message type between cluster workers and the primary. */
export const IPC_TYPE = "portcullis:session-invalidation";
/** PostgreSQL refuses NOTIFY payloads from 8000 bytes on: a bigger message becomes "forget everything". */
const MAX_PAYLOAD = 7900;
const RECONNECT_MS = [100, 250, 500, 1000, 2000, 5000];

/**
 * What travels on the channel. `inv`: an eviction, numbered by its sender; `ack`: a listener
 * applied it; `hello` (on connect), `here` (the answer, and every HEARTBEAT_MS) and `bye` (on
 * close) keep each instance's list of the others, whose acks a publish waits for.
 */
type Wire =
  | { t: "inv"; from: string; id: number; msg: Invalidation }
  | { t: "ack"; from: string; to: string; id: number }
  | { t: "hello" | "here" | "bye"; from: string };

function encode(wire: Wire): string {
  const text = JSON.stringify(wire);
  return text.length <= MAX_PAYLOAD || wire.t !== "inv" ? text : JSON.stringify({ ...wire, msg: { all: true } });
}

function decode(text: string | undefined): Wire | null {
  try {
    const value = JSON.parse(text ?? "") as Wire;
    return value && typeof value.from === "string" && typeof value.t === "string" ? value : null;
  } catch {
    return null;
  }
}

export const noChannel: InvalidationChannel = { kind: "none", settled: () => Promise.resolve(), close: () => Promise.resolve() };

/** How long a publish waits for the other instances' acks before the writer answers anyway. */
export const ACK_TIMEOUT_MS = 250;
/** An instance that missed this many acks in a row is no longer waited for (until it is heard again). */
const MAX_MISSES = 3;
const HEARTBEAT_MS = 10_000;

/**
 * LISTEN on a dedicated connection; NOTIFY on it too. A publish resolves once every other
 * listening instance has applied the eviction and said so (or ACK_TIMEOUT_MS passed): the
 * writer answers after that, so no instance still allows a session the writer reports revoked.
 * An instance whose connection is down has its cache off meanwhile, so it has nothing stale.
 */
export async function postgresChannel(url: string, cache: SessionCache, logger: Logger): Promise<InvalidationChannel> {
  const self = randomUUID();
  let client: PgType.Client | null = null;
  let closed = false;
  let attempt = 0;
  let nextId = 0;
  let timer: NodeJS.Timeout | undefined;
  let pending: Promise<void> = Promise.resolve();
  /** The other instances, by id: misses = acks missed in a row. */
  const members = new Map<string, number>();
  const waiting = new Map<number, { need: Set<string>; done: () => void }>();

  const send = (wire: Wire): Promise<void> => {
    const c = client;
    if (!c) return Promise.resolve();
    return c.query("SELECT pg_notify($1, $2)", [CHANNEL, encode(wire)]).then(
      () => undefined,
      (err: unknown) => logger.warn({ err }, "session invalidation: notify failed"),
    );
  };

  const acked = (id: number, from: string) => {
    const w = waiting.get(id);
    if (!w) return;
    w.need.delete(from);
    if (w.need.size === 0) w.done();
  };

  const receive = (wire: Wire) => {
    if (wire.from === self) return;
    if (wire.t === "bye") {
      members.delete(wire.from);
      for (const [id] of waiting) acked(id, wire.from);
      return;
    }
    members.set(wire.from, 0);
    if (wire.t === "inv") {
      cache.apply(wire.msg);
      void send({ t: "ack", from: self, to: wire.from, id: wire.id });
    } else if (wire.t === "ack") {
      if (wire.to === self) acked(wire.id, wire.from);
    } else if (wire.t === "hello") {
      void send({ t: "here", from: self });
    }
  };

  const connect = async (): Promise<void> => {
    const pg = loadPackage("pg") as typeof PgType;
    const c = new pg.Client({ connectionString: url, application_name: LISTENER_APPLICATION_NAME });
    c.on("notification", (n) => {
      const wire = decode(n.payload);
      if (wire) receive(wire);
    });
    c.on("error", (err) => lost(c, err));
    c.on("end", () => lost(c, new Error("connection ended")));
    await c.connect();
    await c.query(`LISTEN ${CHANNEL}`);
    if (closed) {
      await c.end();
      return;
    }
    client = c;
    attempt = 0;
    // Whatever was evicted elsewhere while we were not listening is unknown: start empty.
    cache.resume();
    await send({ t: "hello", from: self });
  };

  const lost = (c: PgType.Client, err: Error) => {
    if (client !== c) return;
    client = null;
    cache.suspend();
    if (closed) return;
    logger.warn({ err }, "session invalidation channel lost; session cache off until it is back");
    c.end().catch(() => undefined);
    retry();
  };

  const retry = () => {
    const delay = RECONNECT_MS[Math.min(attempt++, RECONNECT_MS.length - 1)]!;
    timer = setTimeout(() => {
      connect().catch((err: unknown) => {
        if (closed) return;
        logger.warn({ err }, "session invalidation channel: reconnect failed");
        retry();
      });
    }, delay);
  };

  const heartbeat = setInterval(() => void send({ t: "here", from: self }), HEARTBEAT_MS);
  heartbeat.unref();
  cache.suspend();
  await connect();

  cache.publish = (msg) => {
    if (!client) return; // our cache is off; the others cannot be told: they time out nothing, we wait for nothing
    const id = nextId++;
    const need = new Set([...members.keys()]);
    const delivered = new Promise<void>((resolve) => {
      const finish = setTimeout(() => {
        for (const m of need) {
          const misses = (members.get(m) ?? 0) + 1;
          if (misses >= MAX_MISSES) members.delete(m);
          else members.set(m, misses);
        }
        if (need.size) logger.warn({ missing: need.size }, "session invalidation: not every instance acknowledged in time");
        waiting.delete(id);
        resolve();
      }, ACK_TIMEOUT_MS);
      const done = () => {
        clearTimeout(finish);
        waiting.delete(id);
        resolve();
      };
      if (need.size === 0) return void send({ t: "inv", from: self, id, msg }).then(done);
      waiting.set(id, { need, done });
      void send({ t: "inv", from: self, id, msg });
    });
    pending = Promise.all([pending, delivered]).then(() => undefined);
  };

  return {
    kind: "postgres",
    settled: () => pending,
    async close() {
      clearInterval(heartbeat);
      await send({ t: "bye", from: self });
      closed = true;
      clearTimeout(timer);
      cache.publish = null;
      for (const w of waiting.values()) w.done();
      const c = client;
      client = null;
      await c?.end().catch(() => undefined);
    },
  };
}

/** Between a cluster worker and the primary: an eviction, a worker's ack of it, and the primary's "every worker has it". */
type Ipc =
  | { type: typeof IPC_TYPE; kind: "inv"; id: number; from?: number; msg: Invalidation }
  | { type: typeof IPC_TYPE; kind: "ack"; id: number; from: number }
  | { type: typeof IPC_TYPE; kind: "done"; id: number };

/**
 * A cluster worker: evictions go to the primary, which hands them to every other worker; a
 * publish resolves once the primary reports that all of them applied it (or ACK_TIMEOUT_MS).
 */
export function clusterChannel(cache: SessionCache): InvalidationChannel {
  let nextId = 0;
  let pending: Promise<void> = Promise.resolve();
  const waiting = new Map<number, () => void>();
  const onMessage = (m: unknown) => {
    const msg = m as Ipc;
    if (msg?.type !== IPC_TYPE) return;
    if (msg.kind === "inv") {
      cache.apply(msg.msg);
      process.send?.({ type: IPC_TYPE, kind: "ack", id: msg.id, from: msg.from ?? -1 } satisfies Ipc);
    } else if (msg.kind === "done") {
      waiting.get(msg.id)?.();
    }
  };
  process.on("message", onMessage);
  cache.publish = (msg) => {
    const id = nextId++;
    const delivered = new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        waiting.delete(id);
        resolve();
      };
      const timer = setTimeout(done, ACK_TIMEOUT_MS * 2);
      waiting.set(id, done);
      process.send?.({ type: IPC_TYPE, kind: "inv", id, msg } satisfies Ipc);
    });
    pending = Promise.all([pending, delivered]).then(() => undefined);
  };
  return {
    kind: "cluster",
    settled: () => pending,
    async close() {
      cache.publish = null;
      for (const done of waiting.values()) done();
      process.off("message", onMessage);
    },
  };
}

/** The primary's half of clusterChannel: relays each worker's evictions to the others and collects their acks. */
export function relayInvalidations(): void {
  /** `${origin worker id}:${its message id}` → workers yet to ack, and the report to the origin. */
  const open = new Map<string, { need: Set<number>; finish: () => void }>();
  cluster.on("message", (from, m: unknown) => {
    const msg = m as Ipc;
    if (msg?.type !== IPC_TYPE) return;
    if (msg.kind === "ack") {
      const entry = open.get(`${msg.from}:${msg.id}`);
      entry?.need.delete(from.id);
      if (entry?.need.size === 0) entry.finish();
      return;
    }
    if (msg.kind !== "inv") return;
    const key = `${from.id}:${msg.id}`;
    const others = Object.values(cluster.workers ?? {}).filter((w): w is NonNullable<typeof w> => !!w && w !== from && w.isConnected());
    const finish = () => {
      clearTimeout(timer);
      open.delete(key);
      if (from.isConnected()) from.send({ type: IPC_TYPE, kind: "done", id: msg.id } satisfies Ipc);
    };
    const timer = setTimeout(finish, ACK_TIMEOUT_MS);
    if (others.length === 0) return finish();
    open.set(key, { need: new Set(others.map((w) => w.id)), finish });
    for (const w of others) w.send({ ...msg, from: from.id } satisfies Ipc);
  });
  // A worker that dies owes no acks.
  cluster.on("exit", (worker) => {
    for (const entry of [...open.values()]) {
      entry.need.delete(worker.id);
      if (entry.need.size === 0) entry.finish();
    }
  });
}
