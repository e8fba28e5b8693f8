import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { PortcullisConfig } from "../../../src/index.ts";
import { get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * docs/wire-contract.md §8. The memory limiter counts real wall-clock windows (not the FakeClock), so
 * every test stays well inside one 10 s window, and tests that share a server use their own
 * client IP (trustProxy + X-Forwarded-For) so their counters never meet.
 */

const PASSWORD = "password123";
let ipCounter = 0;
/** A fresh client IP per call. */
function nextIp(): string {
  ipCounter += 1;
  return `203.0.113.${ipCounter}`;
}
const from = (ip: string) => ({ "x-forwarded-for": ip });

function expectRateLimited(res: Reply, windowSec: number) {
  expect(res.status, res.text).toBe(429);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.body).toEqual({ code: "RATE_LIMITED", message: expect.any(String) });
  const retry = Number(res.headers.get("retry-after"));
  expect(Number.isInteger(retry)).toBe(true);
  expect(retry).toBeGreaterThanOrEqual(1);
  expect(retry).toBeLessThanOrEqual(windowSec);
  expect(res.headers.get("x-retry-after")).toBe(res.headers.get("retry-after"));
}

/** Servers a single test starts; closed after it. */
const extra: TestServer[] = [];
async function start(config: PortcullisConfig): Promise<TestServer> {
  const s = await startTestServer(config);
  extra.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(extra.splice(0).map((s) => s.close()));
});

describe("default rules", () => {
  let server: TestServer;
  let email: string;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { enabled: true }, trustProxy: true });
    email = uniqueEmail("rl");
    const up = await post(`${server.auth}/sign-up/email`, { name: "RL", email, password: PASSWORD }, { headers: from(nextIp()) });
    expect(up.status, up.text).toBe(200);
  });
  afterAll(async () => {
    await server?.close();
  });

  it("the 4th sign-in within 10 s from one IP is 429 RATE_LIMITED with Retry-After and X-Retry-After", async () => {
    const ip = nextIp();
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await post(`${server.auth}/sign-in/email`, { email, password: i === 1 ? "wrong-password" : PASSWORD }, { headers: from(ip) });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 401, 200]);
    const fourth = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(ip) });
    expectRateLimited(fourth, 10);
    // no session is handed out with a 429
    expect(fourth.headers.get("set-auth-token")).toBeNull();
    expect(fourth.headers.getSetCookie()).toEqual([]);

    // another client is not affected
    const other = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(nextIp()) });
    expect(other.status, other.text).toBe(200);
  });

  it("the limit is taken on arrival, before the password is checked: of many concurrent sign-ins exactly 3 get through", async () => {
    const ip = nextIp();
    const replies = await Promise.all(
      Array.from({ length: 12 }, () => post(`${server.auth}/sign-in/email`, { email, password: "wrong-password" }, { headers: from(ip) })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 401)).toHaveLength(3);
    expect(statuses.filter((s) => s === 429)).toHaveLength(9);
    for (const r of replies.filter((r) => r.status === 429)) expectRateLimited(r, 10);
  });

  it("sign-up is limited to 3 per 10 s as well, and a limited sign-up creates no user", async () => {
    const ip = nextIp();
    for (let i = 0; i < 3; i++) {
      const res = await post(`${server.auth}/sign-up/email`, { name: "S", email: uniqueEmail("su"), password: PASSWORD }, { headers: from(ip) });
      expect(res.status, res.text).toBe(200);
    }
    const blockedEmail = uniqueEmail("blocked");
    const fourth = await post(`${server.auth}/sign-up/email`, { name: "S", email: blockedEmail, password: PASSWORD }, { headers: from(ip) });
    expectRateLimited(fourth, 10);
    const later = await post(`${server.auth}/sign-up/email`, { name: "S", email: blockedEmail, password: PASSWORD }, { headers: from(nextIp()) });
    expect(later.status, later.text).toBe(200);
  });

  it("other paths get the default 100 requests per 10 s, counted per path", async () => {
    const ip = nextIp();
    const replies = await Promise.all(Array.from({ length: 100 }, () => get(`${server.auth}/get-session`, { headers: from(ip) })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const over = await get(`${server.auth}/get-session`, { headers: from(ip) });
    expectRateLimited(over, 10);
    // another path has its own counter
    const sessions = await get(`${server.auth}/list-sessions`, { headers: from(ip) });
    expect(sessions.status).toBe(401);
  });

  it("tRPC calls of a procedure share the limit of its REST path", async () => {
    const ip = nextIp();
    const viaTrpc = (password: string) => post(`${server.url}/api/trpc/signIn.email`, { email, password }, { headers: from(ip) });
    expect((await viaTrpc(PASSWORD)).status).toBe(200);
    expect((await viaTrpc("wrong-password")).status).toBe(401);
    // one on the bridge: same counter
    expect((await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(ip) })).status).toBe(200);
    const fourth = await viaTrpc(PASSWORD);
    expect(fourth.status, fourth.text).toBe(429);
    expect(fourth.body.error.data.authCode).toBe("RATE_LIMITED");
    expect(fourth.body.error.data.httpStatus).toBe(429);
    const retry = Number(fourth.headers.get("retry-after"));
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(10);
    expect(fourth.headers.get("x-retry-after")).toBe(fourth.headers.get("retry-after"));
    expect(fourth.headers.get("set-auth-token")).toBeNull();
    // and the bridge is now limited too
    expectRateLimited(await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD }, { headers: from(ip) }), 10);
  });

  it("X-Forwarded-For is ignored without trustProxy", async () => {
    const s = await start({ rateLimit: { enabled: true } });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      // a different claimed IP each time: still one client (127.0.0.1)
      const res = await post(`${s.auth}/sign-in/email`, { email: uniqueEmail("nobody"), password: PASSWORD }, { headers: from(nextIp()) });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429]);
  });
});

describe("operator rules", () => {
  it("a custom rule { window: 10, max: 2 } on /get-session", async () => {
    const s = await start({ rateLimit: { enabled: true, rules: { "/get-session": { window: 10, max: 2 } } } });
    expect((await get(`${s.auth}/get-session`)).status).toBe(200);
    expect((await get(`${s.auth}/get-session`)).status).toBe(200);
    expectRateLimited(await get(`${s.auth}/get-session`), 10);
    // the tRPC query maps onto the same path and counter
    const viaTrpc = await get(`${s.url}/api/trpc/getSession`);
    expect(viaTrpc.status).toBe(429);
    expect(viaTrpc.body.error.data.authCode).toBe("RATE_LIMITED");
    // other paths keep the default
    expect((await get(`${s.auth}/ok`)).status).toBe(200);
  });

  it("a rule set to false disables limiting for its path", async () => {
    const s = await start({ rateLimit: { enabled: true, rules: { "/sign-in/email": false } } });
    const replies = await Promise.all(
      Array.from({ length: 6 }, () => post(`${s.auth}/sign-in/email`, { email: uniqueEmail("free"), password: PASSWORD })),
    );
    expect(replies.map((r) => r.status)).toEqual([401, 401, 401, 401, 401, 401]);
    // the wildcard default still holds for its other paths
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await post(`${s.auth}/sign-in/username`, { username: "nobody", password: PASSWORD })).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
  });

  it("a custom default window and max apply to paths without a rule", async () => {
    const s = await start({ rateLimit: { enabled: true, window: 10, max: 3 } });
    for (let i = 0; i < 3; i++) expect((await get(`${s.auth}/get-session`)).status).toBe(200);
    expectRateLimited(await get(`${s.auth}/get-session`), 10);
  });

  it("enabled: false disables every limit", async () => {
    const s = await start({ rateLimit: { enabled: false, rules: { "/get-session": { window: 10, max: 1 } } } });
    const signIns = await Promise.all(
      Array.from({ length: 6 }, () => post(`${s.auth}/sign-in/email`, { email: uniqueEmail("off"), password: PASSWORD })),
    );
    expect(signIns.every((r) => r.status === 401)).toBe(true);
    for (let i = 0; i < 3; i++) expect((await get(`${s.auth}/get-session`)).status).toBe(200);
    const trpcCalls = await Promise.all(
      Array.from({ length: 5 }, () => request("POST", `${s.url}/api/trpc/signIn.email`, { json: { email: uniqueEmail("off"), password: PASSWORD } })),
    );
    expect(trpcCalls.every((r) => r.status === 401)).toBe(true);
  });
});

describe("health checks and metrics", () => {
  it("are never limited: 150 probes each of /ok, /ready (GET, HEAD, tRPC) and /metrics from one address all answer, and are counted", async () => {
    const s = await start({ rateLimit: { enabled: true }, trustProxy: true, metrics: { enabled: true } });
    const headers = from(nextIp());
    const probes: [string, string, string][] = [
      ["GET /ok", "GET", `${s.auth}/ok`],
      ["HEAD /ok", "HEAD", `${s.auth}/ok`],
      ["GET /ready", "GET", `${s.auth}/ready`],
      ["HEAD /ready", "HEAD", `${s.auth}/ready`],
      ["tRPC ok", "GET", `${s.url}/api/trpc/ok`],
      ["tRPC ready", "GET", `${s.url}/api/trpc/ready`],
      ["GET /metrics", "GET", `${s.url}/metrics`],
    ];
    const refused = new Map<string, number>();
    for (let i = 0; i < 150; i++) {
      // A round's seven probes at once, as a load balancer's and a scraper's would arrive.
      await Promise.all(probes.map(async ([name, method, url]) => {
        const res = await request(method, url, { headers });
        if (res.status !== 200) refused.set(`${name} ${res.status}`, (refused.get(`${name} ${res.status}`) ?? 0) + 1);
      }));
    }
    expect(Object.fromEntries(refused)).toEqual({});
    const text = (await request("GET", `${s.url}/metrics`, { headers })).text;
    expect(text).toContain('portcullis_http_requests_total{route="/ok",status="200"} 300');
    expect(text).toContain('portcullis_http_requests_total{route="/ready",status="200"} 300');
    // Every other path keeps its limit (the default 100 per 10 s), from the same address.
    const sessions: number[] = [];
    for (let i = 0; i < 101; i++) sessions.push((await request("GET", `${s.auth}/get-session`, { headers })).status);
    expect(sessions.filter((st) => st === 200)).toHaveLength(100);
    expect(sessions.at(-1)).toBe(429);
  }, 90_000); // 1,151 requests: well inside this on an idle machine, not on one with a load of 15
});
