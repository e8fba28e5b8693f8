/**
 * API keys' limits, admin routes, verify and the library API (docs/machine-access.md): quotas and
 * the per-key rate limit spent by conditional updates (races: exactly one of two requests on the
 * last use passes, on SQLite and PostgreSQL), admins' server-only fields, audit of admin revoke.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEvent } from "../../../src/db/entities/index.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { HOUR, MINUTE } from "../../harness/clock.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
let admin: SignedInUser;
beforeAll(async () => {
  server = await startTestServer({ admin: { roles: { keyVerifier: { apiKey: ["verify"] } } } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server.close();
});

const session = (key: string) => get(`${server.auth}/get-session`, { headers: { "x-api-key": key } });

async function adminKey(userId: string, fields: Record<string, unknown>) {
  const res = await adminPost(server, "create-api-key", { userId, ...fields }, admin.token);
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; key: string; [k: string]: unknown };
}

describe("defaults", () => {
  it("a user's key gets better-auth's default rate limit: 10 requests a day", async () => {
    const user = await signUp(server);
    const res = await post(`${server.auth}/api-key/create`, {}, { bearer: user.token });
    expect(res.body).toMatchObject({ rateLimitEnabled: true, rateLimitMax: 10, rateLimitTimeWindow: 24 * HOUR });
    for (let i = 0; i < 10; i++) expect((await session(res.body.key)).status).toBe(200);
    expectError(await session(res.body.key), 429, "RATE_LIMITED");
  });
});

describe("quotas and rate limits", () => {
  it("remaining decrements per use; at 0 the key answers 429 USAGE_EXCEEDED on every route", async () => {
    const user = await signUp(server);
    const { key, id } = await adminKey(user.id, { remaining: 2, rateLimitEnabled: false });
    expect((await session(key)).status).toBe(200);
    expect((await get(`${server.auth}/api-key/list`, { headers: { "x-api-key": key } })).status).toBe(200);
    expectError(await session(key), 429, "USAGE_EXCEEDED");
    expectError(await post(`${server.auth}/update-user`, { name: "x" }, { headers: { "x-api-key": key } }), 429, "USAGE_EXCEEDED");
    expect((await get(`${server.auth}/api-key/get?id=${id}`, { bearer: user.token })).body.remaining).toBe(0);
  });

  it("refills by refillAmount every refillInterval", async () => {
    const user = await signUp(server);
    const { key } = await adminKey(user.id, { remaining: 1, refillAmount: 2, refillInterval: HOUR, rateLimitEnabled: false });
    expect((await session(key)).status).toBe(200);
    expectError(await session(key), 429, "USAGE_EXCEEDED");
    server.clock.advance(HOUR + 1000);
    expect((await session(key)).status).toBe(200);
    expect((await session(key)).status).toBe(200);
    expectError(await session(key), 429, "USAGE_EXCEEDED");
  });

  it("the per-key window: rateLimitMax requests per rateLimitTimeWindow, then 429 RATE_LIMITED until it has passed", async () => {
    const user = await signUp(server);
    const { key } = await adminKey(user.id, { rateLimitEnabled: true, rateLimitMax: 2, rateLimitTimeWindow: MINUTE });
    expect((await session(key)).status).toBe(200);
    expect((await session(key)).status).toBe(200);
    const limited = await session(key);
    expectError(limited, 429, "RATE_LIMITED");
    expect(limited.headers.get("retry-after")).toBe("60");
    server.clock.advance(MINUTE + 1000);
    expect((await session(key)).status).toBe(200);
  });

  it("race: two concurrent requests on the last remaining use, exactly one passes", async () => {
    const user = await signUp(server);
    for (let round = 0; round < 5; round++) {
      const { key } = await adminKey(user.id, { remaining: 1, rateLimitEnabled: false });
      const statuses = (await Promise.all([session(key), session(key)])).map((r) => r.status).sort();
      expect(statuses).toEqual([200, 429]);
    }
  });

  it("race: two concurrent requests on the last allowed request of a window, exactly one passes", async () => {
    const user = await signUp(server);
    for (let round = 0; round < 5; round++) {
      const { key } = await adminKey(user.id, { rateLimitEnabled: true, rateLimitMax: 2, rateLimitTimeWindow: HOUR });
      expect((await session(key)).status).toBe(200);
      const replies = await Promise.all([session(key), session(key)]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 429]);
      expect(replies.find((r) => r.status === 429)!.body.code).toBe("RATE_LIMITED");
    }
  });
});

describe("admin routes", () => {
  it("need apiKey permissions: a plain user gets better-auth-style 403s", async () => {
    const user = await signUp(server);
    expectError(await adminPost(server, "create-api-key", { userId: user.id }, user.token), 403, "YOU_ARE_NOT_ALLOWED_TO_CREATE_API_KEYS");
    expectError(await adminGet(server, "list-api-keys", { userId: user.id }, user.token), 403, "YOU_ARE_NOT_ALLOWED_TO_LIST_API_KEYS");
    expectError(await adminPost(server, "revoke-api-key", { keyId: "x" }, user.token), 403, "YOU_ARE_NOT_ALLOWED_TO_REVOKE_API_KEYS");
    expectError(await post(`${server.auth}/api-key/verify`, { key: "pc_whatever_whatever" }, { bearer: user.token }), 403, "YOU_ARE_NOT_ALLOWED_TO_VERIFY_API_KEYS");
  });

  it("create with every field for a user, list, and revoke: the key stops at once, audited with actor and owner", async () => {
    const user = await signUp(server);
    const created = await adminKey(user.id, { name: "svc", permissions: { files: ["read"] }, remaining: 100, rateLimitMax: 50, rateLimitTimeWindow: MINUTE });
    expect(created).toMatchObject({ referenceId: user.id, permissions: { files: ["read"] }, remaining: 100, rateLimitMax: 50 });
    expectError(await adminPost(server, "create-api-key", { userId: "00000000-0000-7000-8000-000000000000" }, admin.token), 404, "USER_NOT_FOUND");
    expect((await adminGet(server, "list-api-keys", { userId: "not-a-uuid" }, admin.token)).body).toEqual({ apiKeys: [], total: 0 });
    const list = await adminGet(server, "list-api-keys", { userId: user.id }, admin.token);
    expect(list.body).toMatchObject({ total: 1, apiKeys: [{ id: created.id }] });
    expect((await session(created.key)).status).toBe(200);
    expect((await adminPost(server, "revoke-api-key", { keyId: created.id }, admin.token)).body).toEqual({ success: true });
    expectError(await session(created.key), 401, "INVALID_API_KEY");
    expectError(await adminPost(server, "revoke-api-key", { keyId: created.id }, admin.token), 404, "KEY_NOT_FOUND");
    const events = await server.portcullis.app.orm.em.fork().find(AuditEvent, { targetId: user.id, action: { $in: ["create-api-key", "revoke-api-key"] } });
    expect(events.map((e) => [e.action, e.actorId, JSON.parse(e.metadata!).keyId]).sort()).toEqual([
      ["create-api-key", admin.id, created.id],
      ["revoke-api-key", admin.id, created.id],
    ]);
  });
});

describe("verify", () => {
  it("answers { valid, error, key } to an admin, spends a use, and checks permissions", async () => {
    const user = await signUp(server);
    const { key, id } = await adminKey(user.id, { remaining: 2, permissions: { files: ["read", "write"] }, rateLimitEnabled: false });
    const ok = await post(`${server.auth}/api-key/verify`, { key, permissions: { files: ["read"] } }, { bearer: admin.token });
    expect(ok.body).toMatchObject({ valid: true, error: null, key: { id, remaining: 1, referenceId: user.id } });
    expect(JSON.stringify(ok.body)).not.toContain(key);
    const denied = await post(`${server.auth}/api-key/verify`, { key, permissions: { billing: ["read"] } }, { bearer: admin.token });
    expect(denied.body).toMatchObject({ valid: false, key: null, error: { code: "KEY_NOT_FOUND" } });
    const unknown = await post(`${server.auth}/api-key/verify`, { key: "pc_" + "B".repeat(43) }, { bearer: admin.token });
    expect(unknown.body).toMatchObject({ valid: false, key: null, error: { code: "INVALID_API_KEY" } });
    expect((await server.portcullis.verifyApiKey({ key })).valid).toBe(true);
    expect((await server.portcullis.verifyApiKey({ key })).error).toMatchObject({ code: "USAGE_EXCEEDED" });
  });

  it("a role granting only apiKey:verify may verify", async () => {
    const user = await signUp(server);
    const { key } = await adminKey(user.id, {});
    expect((await adminPost(server, "set-role", { userId: user.id, role: "keyVerifier" }, admin.token)).status).toBe(200);
    expect((await post(`${server.auth}/api-key/verify`, { key }, { bearer: user.token })).body.valid).toBe(true);
  });
});

describe("library API", () => {
  it("createApiKey for a user id with server-only fields; the key works over HTTP", async () => {
    const user = await signUp(server);
    const created = await server.portcullis.createApiKey({ userId: user.id, name: "lib", remaining: 3, rateLimitEnabled: false, permissions: { a: ["b"] } });
    expect(created).toMatchObject({ referenceId: user.id, remaining: 3, permissions: { a: ["b"] } });
    expect((await session(created.key)).body.user.id).toBe(user.id);
    await expect(server.portcullis.createApiKey({ userId: user.id, expiresIn: -5 } as never)).rejects.toMatchObject({ authCode: "VALIDATION_ERROR" });
    await expect(server.portcullis.createApiKey({ userId: "00000000-0000-7000-8000-000000000000" })).rejects.toMatchObject({ authCode: "USER_NOT_FOUND" });
  });
});
