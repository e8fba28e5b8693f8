import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY } from "../../harness/clock.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { testDialect } from "../../harness/database.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * A revocation, a ban or a password change must survive a power cut: the ORM's SQLite connection
 * commits with synchronous = FULL (better-sqlite3's build default in WAL mode is NORMAL, which
 * leaves a commit off the disk until the next checkpoint). Sign-in, sign-up and the sliding
 * expiry, and a token's row (a mailed link, an OAuth state, a passkey challenge) write with
 * NORMAL, one statement at a time, and must always hand the connection back
 * at FULL, also when their write fails.
 */
describe.skipIf(testDialect !== "sqlite")("SQLite commits are durable (synchronous = FULL)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  const synchronous = async () => {
    const rows: { synchronous: number }[] = await server.portcullis.app.orm.em.getConnection().execute("pragma synchronous");
    return rows[0]!.synchronous;
  };
  const FULL = 2;

  it("is FULL from the start, and again after each relaxed write: sign-up, sign-in, a failed sign-up, the sliding expiry, a reset token", async () => {
    expect(await synchronous()).toBe(FULL);
    const email = uniqueEmail("durable");
    const password = "password123";
    const signUp = await post(`${server.auth}/sign-up/email`, { name: "Durable", email, password });
    expect(signUp.status, signUp.text).toBe(200);
    expect(await synchronous()).toBe(FULL);

    const signIn = await post(`${server.auth}/sign-in/email`, { email, password });
    expect(signIn.status, signIn.text).toBe(200);
    expect(await synchronous()).toBe(FULL);

    // The same email again: the insert fails on the unique index inside the relaxed write.
    const taken = await post(`${server.auth}/sign-up/email`, { name: "Again", email, password });
    expect(taken.status, taken.text).toBe(409);
    expect(taken.body.code).toBe("USER_ALREADY_EXISTS");
    expect(await synchronous()).toBe(FULL);

    // Past updateAge (1 day): get-session moves the expiry, a relaxed write too.
    const token = signIn.body.token as string;
    const before = await get(`${server.auth}/get-session`, { bearer: token });
    expect(before.body?.session.id, before.text).toBeDefined();
    server.clock.advance(DAY + 1000);
    server.portcullis.app.sessionCache.clear();
    const after = await get(`${server.auth}/get-session`, { bearer: token });
    expect(after.status, after.text).toBe(200);
    expect(Date.parse(after.body.session.expiresAt)).toBeGreaterThan(Date.parse(before.body.session.expiresAt));
    expect(await synchronous()).toBe(FULL);

    // A mailed token's row, written after the answer: relaxed too, and it is there.
    const count = async () => ((await server.portcullis.app.orm.em.getConnection().execute("select count(*) as n from verifications where purpose = 'password-reset'")) as { n: number }[])[0]!.n;
    const tokensBefore = await count();
    const reset = await post(`${server.auth}/request-password-reset`, { email });
    expect(reset.status, reset.text).toBe(200);
    await server.portcullis.app.mailer.settle();
    expect(await count()).toBe(tokensBefore + 1);
    expect(await synchronous()).toBe(FULL);
  });
});
