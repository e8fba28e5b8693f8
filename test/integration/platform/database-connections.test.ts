import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * PostgreSQL ends a connection the service holds idle (a restart, a failover, an operator's
 * pg_terminate_backend): the service keeps running and the next request opens another. Every
 * pool and client of ours has an error listener; without one, node ends the process.
 */
describe.runIf(testDialect === "postgres")("connections the database ends", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ session: { cacheTtlMs: 0 } });
  });
  afterAll(async () => server?.close());

  it("every idle connection of the service terminated: it answers the next requests", async () => {
    const up = await post(`${server.auth}/sign-up/email`, { email: uniqueEmail("conn"), password: "password123", name: "Conn" });
    expect(up.status).toBe(200);
    const token = up.body.token as string;
    expect((await get(`${server.auth}/get-session`, { bearer: token })).body.user.id).toBeTruthy();

    const admin = new pg.Client({ connectionString: server.db.url });
    await admin.connect();
    try {
      const ended = await admin.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()");
      expect(ended.rowCount).toBeGreaterThan(0);
    } finally {
      await admin.end();
    }
    await new Promise((r) => setTimeout(r, 200));
    // The pools open new connections: a request may still meet a dead one once (a 500), never the process's end.
    let answer = await get(`${server.auth}/get-session`, { bearer: token });
    for (let i = 0; i < 3 && answer.status !== 200; i++) answer = await get(`${server.auth}/get-session`, { bearer: token });
    expect(answer.status).toBe(200);
    expect(answer.body.user.id).toBeTruthy();
    const again = await post(`${server.auth}/sign-in/email`, { email: up.body.user.email, password: "password123" });
    expect([200, 500]).toContain(again.status);
    expect((await post(`${server.auth}/sign-in/email`, { email: up.body.user.email, password: "password123" })).status).toBe(200);
  });
});
