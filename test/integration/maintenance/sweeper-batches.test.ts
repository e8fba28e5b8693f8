import { randomUUID } from "node:crypto";
import { afterEach, describe, expect, it } from "vitest";
import { Session, Verification } from "../../../src/db/entities/index.ts";
import { createSweeper } from "../../../src/modules/maintenance/sweeper.ts";
import type { PortcullisConfig } from "../../../src/index.ts";
import { HOUR, MINUTE } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * The sweeper works off a backlog (a million expired rows an hour) in one
 * sweep: batch after batch until nothing expired is left or its time budget is spent.
 */

const servers: TestServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close().catch(() => {})));
});
async function start(config: PortcullisConfig, logger?: ReturnType<typeof captureLog>) {
  const s = await startTestServer({ ...config, sweeper: { intervalSec: 0, ...config.sweeper } }, logger ? { logger: logger.logger } : {});
  servers.push(s);
  return s;
}
const em = (s: TestServer) => s.portcullis.app.orm.em.fork();

async function signUp(s: TestServer) {
  const res = await post(`${s.auth}/sign-up/email`, { name: "S", email: uniqueEmail("sweep"), password: "password123" });
  expect(res.status, res.text).toBe(200);
  return { id: res.body.user.id as string, token: res.headers.get("set-auth-token")! };
}

/** `count` sessions of `userId` that expired `agoMs` before the server's clock, written straight to the table. */
async function expiredSessions(s: TestServer, userId: string, count: number, agoMs = HOUR) {
  const now = s.clock.now().getTime();
  for (let i = 0; i < count; i += 1000) {
    const rows = Array.from({ length: Math.min(1000, count - i) }, () => ({
      id: randomUUID(),
      tokenHash: randomUUID().replace(/-/g, "").padEnd(64, "0"),
      user: userId,
      expiresAt: new Date(now - agoMs),
      createdAt: new Date(now - 8 * 24 * HOUR),
      updatedAt: new Date(now - 8 * 24 * HOUR),
    }));
    await em(s).insertMany(Session, rows);
  }
}

describe(`sweeping a backlog (${testDialect})`, () => {
  it("one sweep deletes 25,000 expired sessions in 100-row statements (more than the former cap of 100 batches) and keeps every live one", async () => {
    const log = captureLog("info");
    const s = await start({ sweeper: { batchSize: 100 } }, log);
    const owner = await signUp(s);
    const live = await Promise.all([signUp(s), signUp(s), signUp(s)]);
    await expiredSessions(s, owner.id, 25_000);
    expect(await em(s).count(Session, {})).toBe(25_004);

    const statements: string[] = [];
    s.portcullis.app.orm.config.set("onQuery", (sql: string) => (statements.push(sql), sql));
    const swept = await s.portcullis.sweeper.sweepOnce();
    s.portcullis.app.orm.config.set("onQuery", (sql: string) => sql);

    expect(swept.sessions).toBe(25_000);
    const deletes = statements.filter((q) => q.startsWith("delete from sessions"));
    expect(deletes).toHaveLength(251); // 250 full batches, then one that finds nothing
    expect(deletes.every((q) => /limit \?/.test(q))).toBe(true);
    // the live sessions: the owner's own sign-up session and the three others
    expect(await em(s).count(Session, {})).toBe(4);
    for (const u of [owner, ...live]) expect((await get(`${s.auth}/get-session`, { bearer: u.token })).body.user.id).toBe(u.id);
    expect(log.lines().find((l) => l.msg === "expired rows swept")?.swept.sessions).toBe(25_000);
    expect(log.lines().some((l) => l.msg.startsWith("sweep time budget spent"))).toBe(false);
  });

  it("a spent time budget ends the sweep after a round (one batch of every table with expired rows); the next sweep goes on", async () => {
    const log = captureLog("info");
    const s = await start({ sweeper: { batchSize: 100 } }, log);
    const owner = await signUp(s);
    await expiredSessions(s, owner.id, 250);
    const now = s.clock.now().getTime();
    await em(s).insertMany(Verification, Array.from({ length: 30 }, (_, i) => ({
      id: randomUUID(),
      identifier: `expired-${i}`.padEnd(64, "x"),
      purpose: "test",
      value: "{}",
      expiresAt: new Date(now - MINUTE),
      createdAt: new Date(now - HOUR),
    })));
    const sweeper = createSweeper(s.portcullis.app, { budgetMs: 0 });

    expect(await sweeper.sweepOnce()).toMatchObject({ sessions: 100, verifications: 30 });
    expect(log.lines().find((l) => l.msg.startsWith("sweep time budget spent"))?.left).toEqual(["sessions"]);
    expect(await sweeper.sweepOnce()).toMatchObject({ sessions: 100, verifications: 0 });
    expect(await sweeper.sweepOnce()).toMatchObject({ sessions: 50 });
    expect(await em(s).count(Session, {})).toBe(1);
    expect((await get(`${s.auth}/get-session`, { bearer: owner.token })).body.user.id).toBe(owner.id);
  });
});
