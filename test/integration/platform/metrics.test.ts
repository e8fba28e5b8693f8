import { afterAll, afterEach, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { captureLogs } from "../../harness/oauth-helpers.ts";
import { startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { freePort } from "../../process/harness.ts";

/**
 * GET /metrics (Prometheus text), scraped after real traffic through REST and tRPC;
 * each number is checked against what that traffic must have moved.
 */

const servers: TestServer[] = [];
let smtp: SmtpSink | undefined;
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});
afterAll(async () => {
  await smtp?.close();
});

async function start(config: Parameters<typeof startTestServer>[0], options: Parameters<typeof startTestServer>[1] = {}): Promise<TestServer> {
  const s = await startTestServer(config, options);
  servers.push(s);
  return s;
}

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Prometheus text format 0.0.4: `name{a="x",b="y"} value` lines (comments skipped). */
function parse(text: string): Sample[] {
  return text
    .split("\n")
    .filter((l) => l && !l.startsWith("#"))
    .map((line) => {
      const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
      if (!m) throw new Error(`not an exposition line: ${line}`);
      const labels: Record<string, string> = {};
      for (const [, k, v] of (m[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[k!] = v!;
      return { name: m[1]!, labels, value: Number(m[3]) };
    });
}

/** The value of the one sample with this name and these labels (0 when absent: a counter not moved yet). */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const hits = samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v) && Object.keys(s.labels).length === Object.keys(labels).length);
  if (hits.length > 1) throw new Error(`${name} ${JSON.stringify(labels)} matches ${hits.length} samples`);
  return hits[0]?.value ?? 0;
}

async function scrape(url: string): Promise<Sample[]> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

describe(`GET /metrics (${testDialect})`, () => {
  it("is off unless metrics.enabled: 404, and nothing is counted", async () => {
    const s = await start({});
    expect(s.portcullis.app.metrics).toBeUndefined();
    expect((await get(`${s.url}/metrics`)).status).toBe(404);
  });

  it("after real traffic: requests by route and status, latencies, sign-in outcomes, rate-limit refusals, session cache, mail, pools", async () => {
    smtp = await startSmtpSink();
    const s = await start({ metrics: { enabled: true }, rateLimit: { enabled: true }, email: { smtpUrl: smtp.url } });
    const email = uniqueEmail("metrics");
    const password = "metrics-password-1";

    expect((await post(`${s.auth}/sign-up/email`, { name: "M", email, password })).status).toBe(200);
    // Three sign-ins through the 3-per-10 s rule (REST and tRPC share it), then a refused fourth.
    expect((await post(`${s.auth}/sign-in/email`, { email, password: "wrong-password-1" })).status).toBe(401);
    const signIn = await post(`${s.auth}/sign-in/email`, { email, password });
    expect(signIn.status).toBe(200);
    const token = signIn.headers.get("set-auth-token")!;
    expect((await request("POST", `${s.url}/api/trpc/signIn.email`, { json: { email, password: "wrong-password-2" } })).status).toBe(401);
    expect((await post(`${s.auth}/sign-in/email`, { email, password })).status).toBe(429);

    const before = await scrape(`${s.url}/metrics`);
    for (let i = 0; i < 5; i++) expect((await get(`${s.auth}/get-session`, { bearer: token })).body.user.email).toBe(email);

    // One reset mail delivered, one refused by the SMTP server.
    expect((await post(`${s.auth}/request-password-reset`, { email })).status).toBe(200);
    await smtp.waitFor((m) => m.to.includes(email));
    smtp.rejectAll(true);
    expect((await post(`${s.auth}/request-password-reset`, { email })).status).toBe(200);
    await s.portcullis.app.mailer.settle();

    const m = await scrape(`${s.url}/metrics`);
    const requests = (route: string, status: number) => value(m, "portcullis_http_requests_total", { route, status: String(status) });
    expect(requests("/sign-up/email", 200)).toBe(1);
    expect(requests("/sign-in/email", 401)).toBe(1);
    expect(requests("/sign-in/email", 200)).toBe(1);
    expect(requests("/sign-in/email", 429)).toBe(1);
    expect(requests("trpc", 401)).toBe(1);
    expect(requests("/get-session", 200)).toBe(5);
    expect(requests("/request-password-reset", 200)).toBe(2);
    expect(requests("metrics", 200)).toBe(1); // the first scrape

    const signIns = (route: string, outcome: string) => value(m, "portcullis_sign_in_attempts_total", { route, outcome });
    expect(signIns("/sign-up/email", "success")).toBe(1);
    expect(signIns("/sign-in/email", "success")).toBe(1);
    expect(signIns("/sign-in/email", "INVALID_EMAIL_OR_PASSWORD")).toBe(2); // REST and tRPC
    expect(signIns("/sign-in/email", "RATE_LIMITED")).toBe(1);
    expect(value(m, "portcullis_rate_limited_total", { route: "/sign-in/email" })).toBe(1);

    // Latency histogram of the fast path: cumulative buckets ending at +Inf = count = 5.
    const buckets = m.filter((x) => x.name === "portcullis_http_request_duration_seconds_bucket" && x.labels.route === "/get-session");
    expect(buckets.at(-1)).toMatchObject({ labels: { le: "+Inf" }, value: 5 });
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(value(m, "portcullis_http_request_duration_seconds_count", { route: "/get-session" })).toBe(5);
    expect(value(m, "portcullis_http_request_duration_seconds_sum", { route: "/get-session" })).toBeGreaterThan(0);

    // The five checks: cache lookups moved by five, at least four answered from the cache (the clock stands still).
    const lookups = (samples: Sample[], result: string) => value(samples, "portcullis_session_cache_lookups_total", { result });
    const hits = lookups(m, "hit") - lookups(before, "hit");
    expect(hits + lookups(m, "miss") - lookups(before, "miss")).toBe(5);
    expect(hits).toBeGreaterThanOrEqual(4);
    expect(value(m, "portcullis_session_cache_entries")).toBeGreaterThanOrEqual(1);

    expect(value(m, "portcullis_mail_sent_total")).toBe(1);
    expect(value(m, "portcullis_mail_failures_total")).toBe(1);

    for (const state of ["used", "idle", "waiting"]) expect(m.some((x) => x.name === "portcullis_db_pool_connections" && x.labels.pool === "orm" && x.labels.state === state)).toBe(true);
    if (testDialect === "postgres") {
      // Sign-in's credential lookup ran on the session store's pool: it holds a connection now.
      expect(value(m, "portcullis_db_pool_connections", { pool: "session_store", state: "idle" }) + value(m, "portcullis_db_pool_connections", { pool: "session_store", state: "used" })).toBeGreaterThanOrEqual(1);
    }
    expect(m.some((x) => x.name === "process_cpu_user_seconds_total")).toBe(true); // prom-client's process metrics

    const head = await fetch(`${s.url}/metrics`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
  });

  it("metrics.port: a listener of its own (the service's port answers 404 there), closed with the service", async () => {
    const port = await freePort();
    const s = await start({ metrics: { enabled: true, port, path: "/internal/metrics" } });
    expect((await get(`${s.url}/internal/metrics`)).status).toBe(404);
    expect((await get(`${s.auth}/ok`)).status).toBe(200);
    const m = await scrape(`http://127.0.0.1:${port}/internal/metrics`);
    expect(value(m, "portcullis_http_requests_total", { route: "/ok", status: "200" })).toBe(1);
    expect((await fetch(`http://127.0.0.1:${port}/metrics`)).status).toBe(404);
    await servers.splice(0)[0]!.close();
    await expect(fetch(`http://127.0.0.1:${port}/internal/metrics`)).rejects.toThrow();
  });

  it("metrics.token: without the right Bearer 401 (with the challenge), on the service's port and on metrics.port", async () => {
    const token = "metrics-token-metrics-token-0123456789";
    const port = await freePort();
    const onMain = await start({ metrics: { enabled: true, token } });
    const onOwn = await start({ metrics: { enabled: true, token, port } });
    for (const url of [`${onMain.url}/metrics`, `http://127.0.0.1:${port}/metrics`]) {
      for (const authorization of [undefined, "Bearer wrong-token", `Bearer ${token}x`, `Bearer ${token.slice(0, -1)}`, `Basic ${token}`, token]) {
        const res = await fetch(url, { headers: authorization === undefined ? {} : { authorization } });
        expect(res.status, `${url} ${authorization}`).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
        expect(await res.json()).toMatchObject({ code: "UNAUTHORIZED" });
        expect((await fetch(url, { method: "HEAD", headers: authorization === undefined ? {} : { authorization } })).status).toBe(401);
      }
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toContain("portcullis_http_requests_total");
    }
    // The refusals are counted like any answer.
    const m = parse(await (await fetch(`${onMain.url}/metrics`, { headers: { authorization: `bearer ${token}` } })).text());
    expect(value(m, "portcullis_http_requests_total", { route: "metrics", status: "401" })).toBe(12);
  });

  it("the start says where the metrics are served and who may read them", async () => {
    const token = "metrics-token-metrics-token-0123456789";
    const port = await freePort();
    const cases = [
      [{ enabled: true }, { msg: "metrics served on the service's port", path: "/metrics", access: "anyone who reaches it (no metrics.token)" }],
      [{ enabled: true, public: true }, { msg: "metrics served on the service's port", path: "/metrics", access: "anyone who reaches it (no metrics.token)" }],
      [{ enabled: true, token }, { msg: "metrics served on the service's port", path: "/metrics", access: "Bearer token (metrics.token)" }],
      [{ enabled: true, port, token }, { msg: "metrics listening", url: `http://127.0.0.1:${port}/metrics`, path: "/metrics", access: "Bearer token (metrics.token)" }],
    ] as const;
    for (const [metrics, line] of cases) {
      const logs = captureLogs();
      await start({ metrics }, { logger: logs.logger });
      const said = logs.entries().filter((e) => String(e.msg).startsWith("metrics"));
      expect(said, JSON.stringify(metrics)).toEqual([expect.objectContaining(line)]);
      expect(logs.lines.join("\n")).not.toContain(token);
      await Promise.all(servers.splice(0).map((s) => s.close()));
    }
    const quiet = captureLogs();
    await start({}, { logger: quiet.logger });
    expect(quiet.entries().filter((e) => String(e.msg).startsWith("metrics"))).toEqual([]);
  });
});
