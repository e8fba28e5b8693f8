import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * The session cache must never outlive a revocation made through the service: every test here
 * runs with a 60 s TTL and a frozen clock, so only explicit eviction can make them pass.
 */
let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ session: { cacheTtlMs: 60_000 } });
});
afterAll(async () => {
  await server.close();
});

async function signUp(username?: string) {
  const res = await post(`${server.auth}/sign-up/email`, { name: "C", email: uniqueEmail("cache"), password: "password123", username });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

async function signIn(email: string) {
  const res = await post(`${server.auth}/sign-in/email`, { email, password: "password123" });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

const session = (token: string) => get(`${server.auth}/get-session`, { bearer: token });

describe("session cache invalidation", () => {
  it("sign-out is seen at once", async () => {
    const token = await signUp();
    expect((await session(token)).body).not.toBeNull(); // cached now
    await post(`${server.auth}/sign-out`, undefined, { bearer: token });
    expect((await session(token)).body).toBeNull();
  });

  it("revoke-other-sessions and revoke-session are seen at once", async () => {
    const first = await signUp();
    const email = (await session(first)).body.user.email as string;
    const second = await signIn(email);
    const third = await signIn(email);
    for (const t of [first, second, third]) expect((await session(t)).body).not.toBeNull();
    const secondId = (await session(second)).body.session.id as string;
    await post(`${server.auth}/revoke-session`, { id: secondId }, { bearer: first });
    expect((await session(second)).body).toBeNull();
    await post(`${server.auth}/revoke-other-sessions`, undefined, { bearer: first });
    expect((await session(third)).body).toBeNull();
    expect((await session(first)).body).not.toBeNull();
  });

  it("update-user is reflected at once", async () => {
    const token = await signUp("cacheduser");
    expect((await session(token)).body.user.name).toBe("C");
    await post(`${server.auth}/update-user`, { name: "Renamed", username: "renamed_user" }, { bearer: token });
    const after = await session(token);
    expect(after.body.user.name).toBe("Renamed");
    expect(after.body.user.username).toBe("renamed_user");
  });

  it("change-password with revokeOtherSessions kills every cached session", async () => {
    const first = await signUp();
    const email = (await session(first)).body.user.email as string;
    const other = await signIn(email);
    expect((await session(other)).body).not.toBeNull();
    const res = await post(
      `${server.auth}/change-password`,
      { currentPassword: "password123", newPassword: "password456", revokeOtherSessions: true },
      { bearer: first },
    );
    expect(res.status).toBe(200);
    expect((await session(first)).body).toBeNull();
    expect((await session(other)).body).toBeNull();
    expect((await session(res.body.token)).body).not.toBeNull();
  });

  it("expiry is checked on every hit, not only on a miss", async () => {
    const token = await signUp();
    expect((await session(token)).body).not.toBeNull();
    server.clock.advance(7 * 24 * 3600 * 1000 + 1000);
    expect((await session(token)).body).toBeNull();
  });

  it("a direct database write is seen once the TTL has passed", async () => {
    const token = await signUp();
    const id = (await session(token)).body.user.id as string;
    const em = server.portcullis.app.orm.em.fork();
    await em.nativeUpdate(User, { id }, { name: "Edited in the database" });
    expect((await session(token)).body.user.name).toBe("C"); // still cached
    server.clock.advance(60_000);
    expect((await session(token)).body.user.name).toBe("Edited in the database");
  });
});
