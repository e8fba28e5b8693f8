import { randomInt } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { applyEnv, resolveConfig } from "../../src/config/index.ts";
import type { PortcullisConfig } from "../../src/index.ts";
import { testDialect } from "../harness/database.ts";
import { post, uniqueEmail } from "../harness/http.ts";
import { captureLog } from "../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../harness/server.ts";

/**
 * Issue 14 item 7: rate limits across instances. `rateLimit.storage: "redis"` keeps the counts in
 * the Redis of this machine (127.0.0.1:6379, as in CI), shared by every instance naming it; on
 * PostgreSQL the default store is the shared database one. Counting is wall-clock
 * (rate-limiter-flexible), so each test uses client IPs of its own (random, as the Redis is
 * shared with the other dialect's run).
 */

const REDIS_URL = process.env.PORTCULLIS_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";
const REDIS: PortcullisConfig = { rateLimit: { enabled: true, storage: "redis", redisUrl: REDIS_URL }, trustProxy: true };
const randomIp = () => `10.${randomInt(256)}.${randomInt(256)}.${randomInt(1, 255)}`;

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(config: PortcullisConfig, logger?: ReturnType<typeof captureLog>) {
  const s = await startTestServer(config, logger ? { logger: logger.logger } : {});
  servers.push(s);
  return s;
}

const signIn = (s: TestServer, ip: string) =>
  post(`${s.auth}/sign-in/email`, { email: uniqueEmail("rl"), password: "password123" }, { headers: { "x-forwarded-for": ip } });

describe(`rate limits in Redis (${testDialect})`, () => {
  it("three instances on one Redis refuse the fourth sign-in of a 3-per-10 s rule, whichever instance it reaches", async () => {
    const [a, b, c] = [await start(REDIS), await start(REDIS), await start(REDIS)] as [TestServer, TestServer, TestServer];
    expect(a.portcullis.app.rateLimiter.storage).toBe("redis");
    const ip = randomIp();
    expect((await signIn(a, ip)).status).toBe(401);
    expect((await signIn(b, ip)).status).toBe(401);
    expect((await signIn(c, ip)).status).toBe(401);
    for (const s of [a, b, c]) {
      const refused = await signIn(s, ip);
      expect(refused.status, refused.text).toBe(429);
      expect(refused.body.code).toBe("RATE_LIMITED");
    }
    // Another client still has its budget.
    expect((await signIn(b, randomIp())).status).toBe(401);
  });

  it("Redis away: each instance counts in memory (never unlimited, never a 500) and says so in its log", async () => {
    const log = captureLog();
    const s = await start({ ...REDIS, rateLimit: { enabled: true, storage: "redis", redisUrl: "redis://127.0.0.1:1" } }, log);
    const ip = randomIp();
    for (let i = 0; i < 3; i++) expect((await signIn(s, ip)).status).toBe(401);
    expect((await signIn(s, ip)).status).toBe(429);
    expect(log.lines().some((l) => l.msg === "rate limit store failed: counting in memory on this instance")).toBe(true);
  });
});

describe("storage defaults and config", () => {
  it(`defaults to the shared database store on PostgreSQL and to memory on SQLite (${testDialect})`, async () => {
    const s = await start({ rateLimit: { enabled: true } });
    expect(s.portcullis.app.rateLimiter.storage).toBe(testDialect === "postgres" ? "database" : "memory");
  });

  it("storage redis needs a redis:// URL; REDIS_URL provides it", () => {
    expect(() => resolveConfig({ rateLimit: { storage: "redis" } })).toThrow(/rateLimit\.redisUrl/);
    expect(() => resolveConfig({ rateLimit: { storage: "redis", redisUrl: "http://127.0.0.1:6379" } })).toThrow(/rateLimit\.redisUrl/);
    expect(resolveConfig(applyEnv({ rateLimit: { storage: "redis" } }, { REDIS_URL })).rateLimit.redisUrl).toBe(REDIS_URL);
  });
});
