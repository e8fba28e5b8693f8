import { randomBytes, randomInt } from "node:crypto";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { applyEnv, resolveConfig } from "../../../src/config/index.ts";
import type { PortcullisConfig } from "../../../src/index.ts";
import { testDialect } from "../../harness/database.ts";
import { post, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Rate limits across instances. `rateLimit.storage: "redis"` keeps the counts in
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

describe(`Redis keys (${testDialect})`, () => {
  /** Every key of this Redis matching `pattern` (a test Redis: KEYS is fine). */
  async function keys(pattern: string): Promise<string[]> {
    const redis = new Redis(REDIS_URL, { lazyConnect: true });
    try {
      await redis.connect();
      return await redis.keys(pattern);
    } finally {
      redis.disconnect();
    }
  }

  /**
   * Until its Redis connection is up, an instance counts in memory (the store has no offline
   * queue): sign in from throwaway addresses until one's key is in Redis.
   */
  async function connected(s: TestServer): Promise<void> {
    for (let i = 0; i < 40; i++) {
      const ip = randomIp();
      await signIn(s, ip);
      if ((await keys(`*${ip}|*`)).length > 0) return;
      await new Promise((w) => setTimeout(w, 50));
    }
    throw new Error("the instance never wrote to Redis");
  }

  it("carry the prefix portcullis: by default, so a shared Redis keeps them apart from other apps' keys", async () => {
    const s = await start(REDIS);
    await connected(s);
    const ip = randomIp();
    expect((await signIn(s, ip)).status).toBe(401);
    const found = await keys(`*${ip}|*`);
    expect(found).toEqual([`portcullis:/sign-in/*:${ip}|/sign-in/email`]);
  });

  it("rateLimit.redisKeyPrefix replaces it, for the per-IP and the per-address counters alike", async () => {
    const prefix = `pc-test-${randomBytes(6).toString("hex")}:`;
    const s = await start({ ...REDIS, rateLimit: { enabled: true, storage: "redis", redisUrl: REDIS_URL, redisKeyPrefix: prefix } });
    await connected(s);
    const ip = randomIp();
    expect((await signIn(s, ip)).status).toBe(401);
    const reset = await post(`${s.auth}/request-password-reset`, { email: uniqueEmail("prefix") }, { headers: { "x-forwarded-for": ip } });
    expect(reset.status, reset.text).toBe(200);
    await s.portcullis.app.mailer.settle(); // the per-address count is taken in the deferred mail job
    expect(await keys(`*${ip}|*`)).toEqual(expect.arrayContaining([`${prefix}/sign-in/*:${ip}|/sign-in/email`, `${prefix}/request-password-reset:${ip}|/request-password-reset`]));
    const all = await keys(`${prefix}*`);
    expect(all.filter((k) => k.startsWith(`${prefix}address:password-reset:`))).toHaveLength(1);
    expect(all.filter((k) => !k.startsWith(`${prefix}/sign-in/*:`))).toHaveLength(2); // besides connected()'s sign-ins
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
