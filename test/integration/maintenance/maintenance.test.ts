import { afterEach, describe, expect, it } from "vitest";
import { AuditEvent, DeviceCode, RateLimit, Session, Verification } from "../../../src/db/entities/index.ts";
import type { PortcullisConfig } from "../../../src/index.ts";
import { DAY, HOUR, MINUTE, SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Operations: the readiness check, and the sweeper that deletes expired sessions,
 * verification records, device codes and rate-limit rows in bounded batches.
 */

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => {})));
});
async function start(config: PortcullisConfig = {}, logger?: ReturnType<typeof captureLog>) {
  const s = await startTestServer(config, logger ? { logger: logger.logger } : {});
  servers.push(s);
  return s;
}

const em = (s: TestServer) => s.portcullis.app.orm.em.fork();

async function signUp(s: TestServer, rememberMe = true) {
  const res = await post(`${s.auth}/sign-up/email`, { name: "S", email: uniqueEmail("sweep"), password: "password123", rememberMe });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id as string, token: res.headers.get("set-auth-token")! };
}

describe(`GET /ready (${testDialect})`, () => {
  it("answers 200 { ok: true } when the database answers, on the bridge and on tRPC", async () => {
    const s = await start();
    const res = await get(`${s.auth}/ready`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ ok: true });
    const viaTrpc = await get(`${s.url}/api/trpc/ready`);
    expect(viaTrpc.status).toBe(200);
    expect(viaTrpc.body.result.data).toEqual({ ok: true });
  });

  it("answers 503 NOT_READY when the database does not (while /ok still answers 200), and logs why", async () => {
    const log = captureLog("warn");
    const s = await start({}, log);
    await s.portcullis.app.orm.close(true);
    const res = await get(`${s.auth}/ready`);
    expect(res.status, res.text).toBe(503);
    expect(res.body).toEqual({ code: "NOT_READY", message: "Service not ready", requestId: expect.any(String) });
    const viaTrpc = await get(`${s.url}/api/trpc/ready`);
    expect(viaTrpc.status).toBe(503);
    expect(viaTrpc.body.error.data.authCode).toBe("NOT_READY");
    expect((await get(`${s.auth}/ok`)).status).toBe(200);
    expect(log.lines().filter((l) => l.msg === "readiness check failed" && l.err)).toHaveLength(2);
  });
});

describe(`the sweeper (${testDialect})`, () => {
  it("sweepOnce deletes expired sessions in bounded batches and keeps live ones", async () => {
    const log = captureLog("info");
    const s = await start({ sweeper: { intervalSec: 0, batchSize: 3 }, session: { expiresInSec: HOUR / SECOND, shortExpiresInSec: HOUR / SECOND } }, log);
    const old = await Promise.all(Array.from({ length: 7 }, () => signUp(s)));
    s.clock.advance(2 * HOUR); // those seven sessions have expired
    const live = await signUp(s);
    const statements: string[] = [];
    s.portcullis.app.orm.config.set("onQuery", (sql: string) => (statements.push(sql), sql));
    const swept = await s.portcullis.sweeper.sweepOnce();
    s.portcullis.app.orm.config.set("onQuery", (sql: string) => sql);
    expect(swept.sessions).toBe(7);
    // 3 + 3 + 1: every delete is bounded by the batch size
    expect(statements.filter((q) => q.startsWith("delete from sessions"))).toHaveLength(3);
    expect(statements.every((q) => !q.startsWith("delete") || /limit \?/.test(q))).toBe(true);
    for (const u of old) expect(await em(s).count(Session, { user: u.id })).toBe(0);
    expect(await em(s).count(Session, { user: live.id })).toBe(1);
    expect((await get(`${s.auth}/get-session`, { bearer: live.token })).body.user.id).toBe(live.id);
    expect(log.lines().find((l) => l.msg === "expired rows swept")?.swept.sessions).toBe(7);
    // nothing left: a second sweep deletes nothing
    expect(await s.portcullis.sweeper.sweepOnce()).toEqual({ sessions: 0, verifications: 0, deviceCodes: 0, rateLimits: 0, twoFactorChallenges: 0, auditEvents: 0, emailOtps: 0, apiKeys: 0, oauthCodes: 0, oauthAccessTokens: 0, oauthRefreshTokens: 0 });
  });

  it("deletes expired verification records, device codes a day past expiry (expired_token until then) and spent rate-limit rows", async () => {
    const s = await start({ sweeper: { intervalSec: 0, batchSize: 2 }, rateLimit: { enabled: true, storage: "database" } });
    const now0 = s.clock.now().getTime();
    const record = (id: string, expiresInMs: number) =>
      em(s).insert(Verification, { id: crypto.randomUUID(), identifier: id.repeat(64), purpose: "test", value: "{}", expiresAt: new Date(now0 + expiresInMs), createdAt: new Date(now0) });
    await record("a", 3 * DAY); // stays
    for (const id of ["b", "c", "d"]) await record(id, MINUTE); // expire
    // device codes live 30 minutes (default): the first will be a day and a half hour past expiry, the second half an hour
    const first = await post(`${s.auth}/device/code`, { client_id: "tv" });
    expect(first.status, first.text).toBe(200);
    s.clock.advance(DAY);
    const second = await post(`${s.auth}/device/code`, { client_id: "tv" });
    expect(second.status, second.text).toBe(200);
    s.clock.advance(HOUR);
    // the rate limiter counted those requests in rate_limits (windows of seconds, long past by the clock)
    expect(await em(s).count(RateLimit, {})).toBeGreaterThan(0);

    const swept = await s.portcullis.sweeper.sweepOnce();
    expect(swept).toEqual({ sessions: 0, verifications: 3, deviceCodes: 1, rateLimits: expect.any(Number), twoFactorChallenges: 0, auditEvents: 0, emailOtps: 0, apiKeys: 0, oauthCodes: 0, oauthAccessTokens: 0, oauthRefreshTokens: 0 });
    expect(swept.rateLimits).toBeGreaterThan(0);
    expect(await em(s).count(RateLimit, {})).toBe(0);
    expect((await em(s).find(Verification, {})).map((v) => v.identifier)).toEqual(["a".repeat(64)]);
    expect(await em(s).count(DeviceCode, {})).toBe(1);
    // the code within its day of grace still answers expired_token; the swept one is unknown
    const poll = (deviceCode: string) =>
      post(`${s.auth}/device/token`, { grant_type: "urn:ietf:params:oauth:grant-type:device_code", device_code: deviceCode, client_id: "tv" });
    expect((await poll(second.body.device_code)).body.error).toBe("expired_token");
    expect((await poll(first.body.device_code)).body.error).toBe("invalid_grant");
  });

  it("deletes API keys past their expiry; keys without one, or still valid, stay and keep working", async () => {
    const s = await start();
    const user = await signUp(s);
    const create = async (expiresIn?: number) => {
      const res = await post(`${s.auth}/api-key/create`, expiresIn === undefined ? {} : { expiresIn }, { bearer: user.token });
      expect(res.status, res.text).toBe(200);
      return res.body as { id: string; key: string };
    };
    const [short, long, forever] = [await create(DAY / SECOND), await create(30 * DAY / SECOND), await create()];
    const keyWorks = async (key: string) => (await get(`${s.auth}/get-session`, { headers: { "x-api-key": key } })).status;
    expect(await s.portcullis.sweeper.sweepOnce()).toMatchObject({ apiKeys: 0 });
    s.clock.advance(DAY + MINUTE);
    expect(await keyWorks(short.key)).toBe(401); // refused from its expiry on, swept or not
    expect(await s.portcullis.sweeper.sweepOnce()).toMatchObject({ apiKeys: 1 });
    const listed = await get(`${s.auth}/api-key/list`, { bearer: user.token });
    expect(listed.status, listed.text).toBe(200);
    expect((listed.body.apiKeys as { id: string }[]).map((k) => k.id).sort()).toEqual([long.id, forever.id].sort());
    for (const k of [long, forever]) expect(await keyWorks(k.key)).toBe(200);
  });

  it("keeps the audit trail for sweeper.auditRetentionDays (365 by default) and no longer; null keeps it forever", async () => {
    const s = await start({ sweeper: { intervalSec: 0, auditRetentionDays: 30 } });
    const forever = await start({ sweeper: { intervalSec: 0, auditRetentionDays: null } });
    expect(s.portcullis.app.config.sweeper.auditRetentionDays).toBe(30);
    const nowMs = s.clock.now().getTime();
    const event = (server: typeof s, daysAgo: number, action: string) =>
      em(server).insert(AuditEvent, { id: crypto.randomUUID(), actorId: null, impersonatorId: null, action, targetType: "user", targetId: null, ip: null, userAgent: null, metadata: null, createdAt: new Date(nowMs - daysAgo * DAY) });
    for (const server of [s, forever]) {
      await event(server, 31, "old");
      await event(server, 29, "recent");
    }
    expect((await s.portcullis.sweeper.sweepOnce()).auditEvents).toBe(1);
    expect((await em(s).find(AuditEvent, {})).map((e) => e.action)).toEqual(["recent"]);
    expect((await forever.portcullis.sweeper.sweepOnce()).auditEvents).toBe(0);
    expect(await em(forever).count(AuditEvent, {})).toBe(2);
    const defaults = await start({ sweeper: { intervalSec: 0 } });
    expect(defaults.portcullis.app.config.sweeper.auditRetentionDays).toBe(365);
  });

  it("runs on its schedule and stops on close", async () => {
    const log = captureLog("info");
    const s = await start({ sweeper: { intervalSec: 1, batchSize: 500 }, session: { expiresInSec: 60, shortExpiresInSec: 60 } }, log);
    const u = await signUp(s);
    s.clock.advance(2 * MINUTE);
    const deadline = Date.now() + 5000;
    while ((await em(s).count(Session, { user: u.id })) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(await em(s).count(Session, { user: u.id })).toBe(0);
    await s.close();
    servers.splice(servers.indexOf(s), 1);
    const linesAtClose = log.lines().length;
    await new Promise((r) => setTimeout(r, 1500));
    expect(log.lines().filter((l) => l.level >= 40).slice(linesAtClose)).toEqual([]);
  });
});
