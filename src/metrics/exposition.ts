import { collectDefaultMetrics, Registry } from "prom-client";
import type { App } from "../app.ts";
import { hashesInFlight } from "../crypto/password.ts";
import { LATENCY_BOUNDS_MS, type Metrics, type Scraped } from "./counters.ts";

/**
 * Prometheus text for GET /metrics, loaded on the first scrape (prom-client never enters a
 * process that does not serve metrics). Each metric is read from the plain counters
 * (counters.ts) at scrape time, the pattern of prom-client's collect() callbacks, written as the
 * registry's metric interface directly so a histogram can be read as well.
 */

type Labels = Record<string, string | number>;
interface Sample {
  value: number;
  labels: Labels;
  metricName?: string;
}

interface ReadMetric {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; aggregator: "sum"; values: Sample[] }>;
  reset(): void;
}

function read(name: string, help: string, type: ReadMetric["type"], values: () => Sample[]): ReadMetric {
  return {
    name,
    help,
    type,
    aggregator: "sum",
    get: async () => ({ name, help, type, aggregator: "sum", values: values() }),
    reset: () => undefined,
  };
}

function httpRequests(metrics: Metrics): Sample[] {
  const out: Sample[] = [];
  for (const [route, stats] of metrics.routeEntries()) {
    if (stats.ok > 0) out.push({ value: stats.ok, labels: { route, status: 200 } });
    for (const [status, n] of stats.otherStatus) out.push({ value: n, labels: { route, status } });
  }
  return out;
}

function httpDurations(metrics: Metrics): Sample[] {
  const name = "portcullis_http_request_duration_seconds";
  const out: Sample[] = [];
  for (const [route, stats] of metrics.routeEntries()) {
    let cumulative = 0;
    LATENCY_BOUNDS_MS.forEach((bound, i) => {
      cumulative += stats.buckets[i]!;
      out.push({ metricName: `${name}_bucket`, value: cumulative, labels: { route, le: bound / 1000 } });
    });
    out.push({ metricName: `${name}_bucket`, value: stats.count, labels: { route, le: "+Inf" } });
    out.push({ metricName: `${name}_sum`, value: stats.sumMs / 1000, labels: { route } });
    out.push({ metricName: `${name}_count`, value: stats.count, labels: { route } });
  }
  return out;
}

function keyed(map: Map<string, number>, names: [string, string]): Sample[] {
  return [...map].map(([key, value]) => {
    const [a, b] = key.split("\n");
    return { value, labels: { [names[0]]: a!, ...(b === undefined ? {} : { [names[1]]: b }) } };
  });
}

interface TarnPool {
  numUsed(): number;
  numFree(): number;
  numPendingAcquires(): number;
}

/** The ORM's knex pool (tarn): connections in use, idle, and requests waiting for one. */
function ormPool(app: App): TarnPool | undefined {
  try {
    const connection = app.orm.em.getConnection() as unknown as { getKnex(): { client: { pool?: TarnPool } } };
    return connection.getKnex().client.pool ?? undefined;
  } catch {
    return undefined;
  }
}

function poolSamples(app: App): Sample[] {
  const out: Sample[] = [];
  const orm = ormPool(app);
  if (orm) {
    out.push({ value: orm.numUsed(), labels: { pool: "orm", state: "used" } });
    out.push({ value: orm.numFree(), labels: { pool: "orm", state: "idle" } });
    out.push({ value: orm.numPendingAcquires(), labels: { pool: "orm", state: "waiting" } });
  }
  const store = app.sessions.poolStats?.();
  if (store) {
    out.push({ value: store.total - store.idle, labels: { pool: "session_store", state: "used" } });
    out.push({ value: store.idle, labels: { pool: "session_store", state: "idle" } });
    out.push({ value: store.waiting, labels: { pool: "session_store", state: "waiting" } });
  }
  return out;
}

function createRegistry(app: App, metrics: Metrics): Registry {
  const registry = new Registry();
  const cache = app.sessionCache;
  const all = [
    read("portcullis_http_requests_total", "HTTP answers by route (pattern) and status", "counter", () => httpRequests(metrics)),
    read("portcullis_http_request_duration_seconds", "Time to answer, by route", "histogram", () => httpDurations(metrics)),
    read("portcullis_sign_in_attempts_total", "Sign-in and sign-up attempts by route and outcome (success or the error code)", "counter", () => keyed(metrics.signIns, ["route", "outcome"])),
    read("portcullis_rate_limited_total", "Requests refused by the rate limiter (429), by route", "counter", () => keyed(metrics.rateLimited, ["route", ""])),
    read("portcullis_session_cache_lookups_total", "Session checks answered from the in-process cache (hit) or the database (miss)", "counter", () => [
      { value: cache.hits, labels: { result: "hit" } },
      { value: cache.misses, labels: { result: "miss" } },
    ]),
    read("portcullis_session_cache_entries", "Sessions held in the in-process cache", "gauge", () => [{ value: cache.size, labels: {} }]),
    read("portcullis_mail_sent_total", "Mails handed to SMTP (or the configured sender)", "counter", () => [{ value: metrics.mailSent, labels: {} }]),
    read("portcullis_mail_failures_total", "Mails that could not be sent", "counter", () => [{ value: metrics.mailFailed, labels: {} }]),
    read("portcullis_password_hashes_in_flight", "Password hashes and verifies started and not finished: running on the thread pool (one per core) or queued for it", "gauge", () => [{ value: hashesInFlight(), labels: {} }]),
    read("portcullis_db_pool_connections", "Database connections by pool (orm, session_store) and state (used, idle, waiting: requests queued for one)", "gauge", () => poolSamples(app)),
  ];
  for (const metric of all) registry.registerMetric(metric as never);
  collectDefaultMetrics({ register: registry });
  return registry;
}

const registries = new WeakMap<Metrics, Registry>();

/** This process's registry (made on first use): its metrics read from `metrics` when collected. */
export function registryOf(app: App, metrics: Metrics): Registry {
  let registry = registries.get(metrics);
  if (!registry) registries.set(metrics, (registry = createRegistry(app, metrics)));
  return registry;
}

/** The exposition text of this process's numbers, and its content type. */
export async function scrape(app: App, metrics: Metrics): Promise<Scraped> {
  const registry = registryOf(app, metrics);
  return { text: await registry.metrics(), contentType: registry.contentType };
}
