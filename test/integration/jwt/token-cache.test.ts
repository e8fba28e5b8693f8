/**
 * The per-session JWT cache behind GET /token and get-session's `set-auth-jwt`
 * (src/modules/jwt/tokens.ts): a session gets the same token while it is young, and never one
 * its session no longer backs. The session cache runs with a 60 s TTL and a frozen clock, as in
 * test/integration/session/session-cache.test.ts: only explicit eviction makes a revocation seen,
 * so these show that the token cache adds no staleness of its own.
 */
import { decodeJwt, type JWTPayload } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { SECOND } from "../../harness/clock.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const LIFETIME_SEC = 400;
let server: TestServer;
let admin: SignedInUser;
beforeAll(async () => {
  server = await startTestServer({ session: { cacheTtlMs: 60_000 }, jwt: { expirationTime: LIFETIME_SEC } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server.close();
});

/** GET /token as `auth` (a session token, or `{ key }` an API key): the JWT, or the refusal's status and code. */
async function token(auth: string | { key: string }) {
  const res = await get(`${server.auth}/token`, typeof auth === "string" ? { bearer: auth } : { headers: { "x-api-key": auth.key } });
  return { status: res.status, code: res.body?.code as string | undefined, jwt: res.body?.token as string | undefined };
}

async function jwtOf(auth: string | { key: string }): Promise<{ jwt: string; claims: JWTPayload }> {
  const { status, jwt } = await token(auth);
  expect(status).toBe(200);
  return { jwt: jwt!, claims: decodeJwt(jwt!) };
}

const nowSec = () => Math.floor(server.clock.now().getTime() / 1000);

async function expectRefused(auth: string | { key: string }) {
  const refused = await token(auth);
  expect(refused.status).toBe(401);
  expect(refused.jwt).toBeUndefined();
  if (typeof auth === "string") {
    const session = await get(`${server.auth}/get-session`, { bearer: auth });
    expect(session.body).toBeNull();
    expect(session.headers.get("set-auth-jwt")).toBeNull();
  }
}

describe("one token per session while it is young", () => {
  it("GET /token, its tRPC call and get-session's set-auth-jwt hand out the same token", async () => {
    const user = await signUp(server);
    const { jwt, claims } = await jwtOf(user.token);
    expect(claims.exp).toBe((claims.iat as number) + LIFETIME_SEC);
    server.clock.advance(30 * SECOND);
    expect((await jwtOf(user.token)).jwt).toBe(jwt);
    expect((await get(`${server.url}/api/trpc/token`, { bearer: user.token })).body.result.data.token).toBe(jwt);
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).headers.get("set-auth-jwt")).toBe(jwt);
  });

  it("a new token, with its own iat and exp, once a quarter of the lifetime has passed: a caller always gets three quarters of it", async () => {
    const user = await signUp(server);
    const first = await jwtOf(user.token);
    // iat is in whole seconds, the clock is not: a second short of the quarter, and a second past it.
    server.clock.advance((LIFETIME_SEC / 4 - 1) * SECOND);
    const reused = await jwtOf(user.token);
    expect(reused.jwt).toBe(first.jwt);
    expect((reused.claims.exp as number) - nowSec()).toBeGreaterThanOrEqual((LIFETIME_SEC * 3) / 4);
    server.clock.advance(2 * SECOND);
    const fresh = await jwtOf(user.token);
    expect(fresh.jwt).not.toBe(first.jwt);
    expect(fresh.claims.iat).toBe(nowSec());
    expect(fresh.claims.exp).toBe(nowSec() + LIFETIME_SEC);
    expect(fresh.claims.sid).toBe(first.claims.sid);
    // set-auth-jwt follows: the one new token, not the old one.
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).headers.get("set-auth-jwt")).toBe(fresh.jwt);
  });

  it("each session has its own token, naming its own session", async () => {
    const user = await signUp(server);
    const other = await signIn(server, user.email);
    const a = await jwtOf(user.token);
    const b = await jwtOf(other.token);
    expect(b.jwt).not.toBe(a.jwt);
    expect(b.claims.sid).not.toBe(a.claims.sid);
    expect(b.claims.sub).toBe(a.claims.sub);
  });

  it("a clock set back gets a new token, never one issued after now", async () => {
    const user = await signUp(server);
    const before = await jwtOf(user.token);
    server.clock.advance(-10 * SECOND);
    try {
      const after = await jwtOf(user.token);
      expect(after.jwt).not.toBe(before.jwt);
      expect(after.claims.iat).toBe(nowSec());
    } finally {
      server.clock.advance(10 * SECOND);
    }
  });
});

describe("a cached token never outlives its session", () => {
  it("signed out: 401, not the cached token", async () => {
    const user = await signUp(server);
    await jwtOf(user.token);
    expect((await post(`${server.auth}/sign-out`, undefined, { bearer: user.token })).status).toBe(200);
    await expectRefused(user.token);
  });

  it("revoked from another of the user's sessions (revoke-session, revoke-other-sessions): 401", async () => {
    const user = await signUp(server);
    const second = await signIn(server, user.email);
    const third = await signIn(server, user.email);
    for (const t of [user.token, second.token, third.token]) await jwtOf(t);
    expect((await post(`${server.auth}/revoke-session`, { token: second.token }, { bearer: user.token })).status).toBe(200);
    await expectRefused(second.token);
    expect((await post(`${server.auth}/revoke-other-sessions`, undefined, { bearer: user.token })).status).toBe(200);
    await expectRefused(third.token);
    await jwtOf(user.token);
  });

  it("its session revoked by an admin, or its user banned: 401", async () => {
    const user = await signUp(server);
    const second = await signIn(server, user.email);
    await jwtOf(user.token);
    await jwtOf(second.token);
    expect((await adminPost(server, "revoke-user-session", { sessionToken: second.token }, admin.token)).status).toBe(200);
    await expectRefused(second.token);
    await jwtOf(user.token);
    expect((await adminPost(server, "ban-user", { userId: user.id }, admin.token)).status).toBe(200);
    await expectRefused(user.token);
  });

  it("an API key's token: per key, and 401 once the key is deleted", async () => {
    const user = await signUp(server);
    const created = await post(`${server.auth}/api-key/create`, {}, { bearer: user.token });
    expect(created.status).toBe(200);
    const key = { key: created.body.key as string };
    const byKey = await jwtOf(key);
    expect(byKey.claims.sub).toBe(user.id);
    expect(byKey.claims.sid).toBe(created.body.id);
    expect((await jwtOf(key)).jwt).toBe(byKey.jwt);
    expect((await jwtOf(user.token)).jwt).not.toBe(byKey.jwt);
    expect((await post(`${server.auth}/api-key/delete`, { keyId: created.body.id }, { bearer: user.token })).status).toBe(200);
    await expectRefused(key);
  });
});

describe("a token says what the session says", () => {
  it("a role change shows in the next token, also within the same millisecond as the user's last change", async () => {
    const user = await signUp(server);
    expect((await jwtOf(user.token)).claims.role).toBe("user");
    // The clock is frozen: the user row's updatedAt does not move, the claims do.
    expect((await adminPost(server, "set-role", { userId: user.id, role: "admin" }, admin.token)).status).toBe(200);
    expect((await jwtOf(user.token)).claims.role).toBe("admin");
    expect(decodeJwt((await get(`${server.auth}/get-session`, { bearer: user.token })).headers.get("set-auth-jwt")!).role).toBe("admin");
  });

  it("a role written straight to the database shows once the session cache's TTL has passed: get-session's own bound", async () => {
    const user = await signUp(server);
    const before = await jwtOf(user.token);
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: user.id }, { role: "admin" });
    const session = await get(`${server.auth}/get-session`, { bearer: user.token });
    expect(session.body.user.role).toBe("user"); // the session cache still holds the row
    expect((await jwtOf(user.token)).jwt).toBe(before.jwt);
    server.clock.advance(60 * SECOND);
    // The row is read again; its updatedAt is unchanged, its role is not.
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body.user.role).toBe("admin");
    expect((await jwtOf(user.token)).claims.role).toBe("admin");
  });
});
