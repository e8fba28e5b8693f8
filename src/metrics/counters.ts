/**
 * The numbers behind GET /metrics, kept as plain integers: a request adds to a few fields of
 * an object it already holds, and prom-client (exposition.ts, loaded only when metrics are on)
 * reads them when scraped. No label maps, no prom-client on the request path.
 */

/** Histogram bucket bounds in milliseconds (Prometheus's `le`, exposed in seconds). */
export const LATENCY_BOUNDS_MS = [1, 2.5, 5, 10, 25, 50, 100, 250, 500, 1000, 2500, 5000, 10_000] as const;

/** One route's answers: counts by status and a latency histogram. */
export class RouteStats {
  /** 200s counted apart: the common case costs no map lookup. */
  ok = 0;
  readonly otherStatus = new Map<number, number>();
  /** Non-cumulative: buckets[i] counts answers in (bounds[i-1], bounds[i]]; the last one is +Inf. */
  readonly buckets = new Float64Array(LATENCY_BOUNDS_MS.length + 1);
  count = 0;
  sumMs = 0;

  observe(status: number, ms: number): void {
    if (status === 200) this.ok++;
    else this.otherStatus.set(status, (this.otherStatus.get(status) ?? 0) + 1);
    let i = 0;
    while (i < LATENCY_BOUNDS_MS.length && ms > LATENCY_BOUNDS_MS[i]!) i++;
    this.buckets[i]!++;
    this.count++;
    this.sumMs += ms;
  }
}

/**
 * Routes (REST paths) whose outcome is a sign-in (or sign-up) attempt, so the route says the
 * method. `/callback/:provider` finishes a social sign-in; the two-factor checks finish a
 * password sign-in's second step; `/magic-link/verify` and `/sign-in/email-otp` a passwordless one.
 */
export const SIGN_IN_ROUTES = new Set([
  "/sign-in/email",
  "/sign-in/username",
  "/sign-in/social",
  "/sign-up/email",
  "/callback/:provider",
  "/passkey/verify-authentication",
  "/two-factor/verify-totp",
  "/two-factor/verify-otp",
  "/two-factor/verify-backup-code",
  "/magic-link/verify",
  "/sign-in/email-otp",
]);

export interface RequestOutcome {
  /** The REST path of the procedure a tRPC call ran (rest-bridge/routes.ts), when it has one. */
  route?: string;
  /** The error code the answer carried (AuthError's), when it failed. */
  errorCode?: string;
  /** The answer was a step on the way (the magic link's confirm page), not the attempt's outcome. */
  interim?: boolean;
}

/** One scrape's answer: Prometheus text and its content type. */
export interface Scraped {
  text: string;
  contentType: string;
}

export class Metrics {
  /**
   * Set in a worker of `serve --workers N`: a scrape reports every worker's numbers, added up by
   * the primary (cluster.ts), not this process's alone.
   */
  whole?: () => Promise<Scraped>;

  private readonly routes = new Map<string, RouteStats>();
  /** `${route}\n${outcome}` → count; outcome "success" or an error code (a bounded set: the error table). */
  readonly signIns = new Map<string, number>();
  /** Requests refused with 429 by route. */
  readonly rateLimited = new Map<string, number>();
  mailSent = 0;
  mailFailed = 0;

  /** The stats object of a route label (get-or-create): the hot path keeps its own reference. */
  route(label: string): RouteStats {
    let stats = this.routes.get(label);
    if (!stats) this.routes.set(label, (stats = new RouteStats()));
    return stats;
  }

  routeEntries(): IterableIterator<[string, RouteStats]> {
    return this.routes.entries();
  }

  /** One finished request of the general path (the get-session fast path observes its RouteStats directly). */
  request(label: string, status: number, ms: number, outcome: RequestOutcome): void {
    this.route(label).observe(status, ms);
    const route = label === "trpc" ? outcome.route : label;
    if (status === 429) this.rateLimited.set(route ?? label, (this.rateLimited.get(route ?? label) ?? 0) + 1);
    if (route !== undefined && SIGN_IN_ROUTES.has(route) && status !== 499 && !outcome.interim) {
      const result = status < 400 && outcome.errorCode === undefined ? "success" : (outcome.errorCode ?? `HTTP_${status}`);
      const key = `${route}\n${result}`;
      this.signIns.set(key, (this.signIns.get(key) ?? 0) + 1);
    }
  }
}
