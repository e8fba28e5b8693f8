import { afterEach, describe, expect, it } from "vitest";
import { shippedMigrations } from "../../../src/db/orm.ts";
import { createTestDatabase, testDialect, type TestDatabase } from "../../harness/database.ts";
import { get, request } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startPgProxy } from "../../harness/pg-proxy.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Readiness ({base}/ready, GET and HEAD) fails while a migration this code ships is
 * not applied (pending, or running: its row is not committed yet) and while the database does
 * not answer; liveness ({base}/ok) keeps answering 200. (While `serve` itself migrates at start:
 * test/process/readiness-migrating.test.ts.)
 */

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function start(config: Parameters<typeof startTestServer>[0], log = captureLog("warn")): Promise<TestServer> {
  const s = await startTestServer(config, { logger: log.logger });
  cleanups.push(() => s.close());
  return s;
}

const status = async (url: string, method = "GET") => (await request(method, url)).status;

describe(`readiness (${testDialect})`, () => {
  it("503 NOT_READY while a shipped migration is not applied, 200 again once it is; /ok stays 200", async () => {
    const log = captureLog("warn");
    const s = await start({}, log);
    const dialect = testDialect === "sqlite" ? "sqlite" : "postgresql";
    const last = shippedMigrations(dialect).at(-1)!;
    const conn = s.portcullis.app.orm.em.getConnection();
    expect(await status(`${s.auth}/ready`)).toBe(200);

    const [row] = (await conn.execute(`select id, name, executed_at from mikro_orm_migrations where name like '${last}%'`)) as { id: number; name: string; executed_at: unknown }[];
    expect(row).toBeDefined();
    await conn.execute(`delete from mikro_orm_migrations where id = ${row!.id}`);
    const res = await get(`${s.auth}/ready`);
    expect(res.status).toBe(503);
    expect(res.body.code).toBe("NOT_READY");
    expect(JSON.stringify(res.body)).not.toContain(last); // the answer names no cause
    expect(await status(`${s.auth}/ready`, "HEAD")).toBe(503);
    expect(await status(`${s.auth}/ok`)).toBe(200);
    expect(await status(`${s.auth}/ok`, "HEAD")).toBe(200);
    expect(log.lines().some((l) => l.msg === "readiness check failed" && String(l.err?.message).includes(`migrations not applied yet: ${last}`))).toBe(true);

    await conn.execute(`insert into mikro_orm_migrations (id, name, executed_at) values (?, ?, ?)`, [row!.id, row!.name, row!.executed_at]);
    expect(await status(`${s.auth}/ready`)).toBe(200);
  });

  it.runIf(testDialect === "postgres")("503 while the PostgreSQL server cannot be reached (connections cut, nothing accepts new ones); /ok 200", async () => {
    const db: TestDatabase = await createTestDatabase();
    cleanups.push(() => db.drop());
    const proxy = await startPgProxy();
    let proxyOpen = true;
    cleanups.push(async () => {
      if (proxyOpen) await proxy.close();
    });
    const s = await start({ databaseUrl: proxy.urlFor(db.url), session: { cacheTtlMs: 0 } });
    expect(await status(`${s.auth}/ready`)).toBe(200);
    await proxy.close(); // every connection through it is cut, and its port refuses new ones
    proxyOpen = false;
    const started = Date.now();
    expect(await status(`${s.auth}/ready`)).toBe(503);
    expect(await status(`${s.auth}/ready`, "HEAD")).toBe(503);
    expect(Date.now() - started).toBeLessThan(10_000); // bounded by the check's own timeout
    expect(await status(`${s.auth}/ok`)).toBe(200);
  });
});
