import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { inTransaction } from "../../../src/db/transaction.ts";
import { DAY, MINUTE } from "../../harness/clock.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * The sliding-expiry write must not break a transaction the service has open. On SQLite a
 * commit from another connection between a transaction's read and its write fails that write
 * (SQLITE_BUSY_SNAPSHOT): the extension therefore goes through the ORM's own connection, after
 * any open transaction. On PostgreSQL the same run shows the two simply do not interfere.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ session: { cacheTtlMs: 0 } });
});
afterAll(async () => server?.close());

describe("sliding expiry beside an open transaction", () => {
  it("a get-session that moves the expiry while a transaction has read: the transaction still commits, and the expiry moves", async () => {
    const up = await post(`${server.auth}/sign-up/email`, { email: uniqueEmail("slide"), password: "password123", name: "Slide" });
    expect(up.status).toBe(200);
    const token = up.body.token as string;
    const userId = up.body.user.id as string;
    server.clock.advance(DAY + MINUTE); // the next check extends

    const em = server.portcullis.app.orm.em.fork();
    let extended: Promise<{ status: number; body: any }> | undefined;
    await inTransaction(em, async (tx) => {
      await tx.findOneOrFail(User, { id: userId }); // the transaction has read: its snapshot is taken
      extended = get(`${server.auth}/get-session`, { bearer: token });
      await new Promise((r) => setTimeout(r, 150)); // the extension had time to commit elsewhere
      await tx.nativeUpdate(User, { id: userId }, { name: "Slide moved" });
    });
    const answer = await extended!;
    expect(answer.status).toBe(200);
    expect(new Date(answer.body.session.expiresAt).getTime()).toBe(server.clock.now().getTime() + 7 * DAY);
    expect((await get(`${server.auth}/get-session`, { bearer: token })).body.user.name).toBe("Slide moved");
  });
});
