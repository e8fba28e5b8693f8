/**
 * API keys (docs/machine-access.md "API keys"): better-auth's /api-key/* shapes, the key header
 * as a principal on every route that takes a session, the one guard that keeps a key away from
 * account security, owner-only records, and revocation through the session cache.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ApiKey, AuditEvent } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { DAY, SECOND } from "../../harness/clock.ts";
import { get, post, request } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ apiKey: { rateLimit: { enabled: false }, enableMetadata: true } });
});
afterAll(async () => {
  await server.close();
});

const withKey = (key: string, headers: Record<string, string> = {}) => ({ headers: { "x-api-key": key, ...headers } });

async function newKey(user: SignedInUser, body: Record<string, unknown> = {}) {
  const res = await post(`${server.auth}/api-key/create`, body, { bearer: user.token });
  expect(res.status, res.text).toBe(200);
  return res.body as { id: string; key: string; start: string; [k: string]: unknown };
}

describe("create, get, list, update, delete", () => {
  it("creates a key shown once, stored as its SHA-256 only, with better-auth's record", async () => {
    const user = await signUp(server);
    const created = await newKey(user, { name: "ci" });
    expect(created.key).toMatch(/^pc_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      name: "ci", prefix: "pc_", start: created.key.slice(0, 6), referenceId: user.id, enabled: true, configId: "default",
      rateLimitEnabled: false, requestCount: 0, remaining: null, refillAmount: null, refillInterval: null, expiresAt: null, metadata: null, permissions: null,
    });
    const row = await server.portcullis.app.orm.em.fork().findOneOrFail(ApiKey, { id: created.id });
    expect(JSON.stringify(row)).not.toContain(created.key.slice(3));
    const got = await get(`${server.auth}/api-key/get?id=${created.id}`, { bearer: user.token });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({ ...created, key: undefined });
    expect(JSON.stringify(got.body)).not.toContain(created.key);
    const list = await get(`${server.auth}/api-key/list`, { bearer: user.token });
    expect(list.body).toMatchObject({ total: 1, apiKeys: [{ id: created.id, start: created.start }] });
    expect(JSON.stringify(list.body)).not.toContain(created.key);
  });

  it("takes a custom prefix, refuses a bad one, and honours expiresIn within the configured days", async () => {
    const user = await signUp(server);
    expect((await newKey(user, { prefix: "acme-" })).key).toMatch(/^acme-/);
    expect((await post(`${server.auth}/api-key/create`, { prefix: "no spaces" }, { bearer: user.token })).status).toBe(400);
    expectError(await post(`${server.auth}/api-key/create`, { prefix: "x".repeat(33) }, { bearer: user.token }), 400, "INVALID_PREFIX_LENGTH");
    expectError(await post(`${server.auth}/api-key/create`, { expiresIn: 60 }, { bearer: user.token }), 400, "EXPIRES_IN_IS_TOO_SMALL");
    expectError(await post(`${server.auth}/api-key/create`, { expiresIn: 400 * 86400 }, { bearer: user.token }), 400, "EXPIRES_IN_IS_TOO_LARGE");
    const dated = await newKey(user, { expiresIn: 2 * 86400 });
    expect(new Date(dated.expiresAt as string).getTime()).toBe(server.clock.now().getTime() + 2 * DAY);
  });

  it("updates name, enabled and metadata; refuses nothing to update", async () => {
    const user = await signUp(server);
    const { id } = await newKey(user);
    const res = await post(`${server.auth}/api-key/update`, { keyId: id, name: "renamed", metadata: { team: "ops" } }, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id, name: "renamed", metadata: { team: "ops" } });
    expectError(await post(`${server.auth}/api-key/update`, { keyId: id }, { bearer: user.token }), 400, "NO_VALUES_TO_UPDATE");
  });

  it("is owner-only: another user's key id answers 404 on get, update and delete, and is left alone", async () => {
    const owner = await signUp(server);
    const other = await signUp(server);
    const { id, key } = await newKey(owner);
    expectError(await get(`${server.auth}/api-key/get?id=${id}`, { bearer: other.token }), 404, "KEY_NOT_FOUND");
    expectError(await post(`${server.auth}/api-key/update`, { keyId: id, enabled: false }, { bearer: other.token }), 404, "KEY_NOT_FOUND");
    expectError(await post(`${server.auth}/api-key/delete`, { keyId: id }, { bearer: other.token }), 404, "KEY_NOT_FOUND");
    expectError(await get(`${server.auth}/api-key/get?id=not-a-uuid`, { bearer: other.token }), 404, "KEY_NOT_FOUND");
    expect((await get(`${server.auth}/get-session`, withKey(key))).body.user.id).toBe(owner.id);
    expect((await get(`${server.auth}/api-key/list`, { bearer: other.token })).body.apiKeys).toEqual([]);
  });

  it("refuses server-only fields from a user's own request (400 SERVER_ONLY_PROPERTY), on create and update", async () => {
    const user = await signUp(server);
    const { id } = await newKey(user);
    for (const field of [{ remaining: 5 }, { permissions: { files: ["read"] } }, { refillAmount: 1, refillInterval: 1000 }, { rateLimitEnabled: true }, { rateLimitMax: 5 }, { rateLimitTimeWindow: 1000 }]) {
      expectError(await post(`${server.auth}/api-key/create`, field, { bearer: user.token }), 400, "SERVER_ONLY_PROPERTY");
      expectError(await post(`${server.auth}/api-key/update`, { keyId: id, ...field }, { bearer: user.token }), 400, "SERVER_ONLY_PROPERTY");
    }
    expect((await get(`${server.auth}/api-key/list`, { bearer: user.token })).body.total).toBe(1);
  });

  it("audits create, update and delete with the key id and its owner", async () => {
    const user = await signUp(server);
    const { id } = await newKey(user, { name: "audited" });
    await post(`${server.auth}/api-key/update`, { keyId: id, name: "again" }, { bearer: user.token });
    await post(`${server.auth}/api-key/delete`, { keyId: id }, { bearer: user.token });
    const events = await server.portcullis.app.orm.em.fork().find(AuditEvent, { targetId: user.id, action: { $like: "%api-key" } }, { orderBy: { createdAt: "asc", id: "asc" } });
    expect(events.map((e) => [e.action, e.actorId, JSON.parse(e.metadata!).keyId])).toEqual([
      ["create-api-key", user.id, id],
      ["update-api-key", user.id, id],
      ["delete-api-key", user.id, id],
    ]);
  });
});

describe("the key header as a principal", () => {
  it("acts as its owner on get-session (REST and tRPC), update-user, /token and api-key list", async () => {
    const user = await signUp(server);
    const { id, key } = await newKey(user);
    const session = await get(`${server.auth}/get-session`, withKey(key));
    expect(session.status).toBe(200);
    expect(session.body.user).toMatchObject({ id: user.id, email: user.email });
    expect(session.body.session).toMatchObject({ id, userId: user.id });
    expect(session.headers.get("set-cookie")).toBeNull();
    const trpc = await get(`${server.url}/api/trpc/getSession`, withKey(key));
    expect(trpc.body.result.data.user.id).toBe(user.id);
    expect((await post(`${server.auth}/update-user`, { name: "By Key" }, withKey(key))).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body.user.name).toBe("By Key");
    expect((await get(`${server.auth}/token`, withKey(key))).status).toBe(200);
    expect((await get(`${server.auth}/api-key/list`, withKey(key))).body.total).toBe(1);
  });

  it("repeated requests with one key are answered from the session cache: one lookup, then hits", async () => {
    const user = await signUp(server);
    const { key } = await newKey(user);
    const cache = server.portcullis.app.sessionCache;
    const [hits, misses] = [cache.hits, cache.misses];
    for (let i = 0; i < 5; i++) expect((await get(`${server.auth}/get-session`, withKey(key))).status).toBe(200);
    expect([cache.hits - hits, cache.misses - misses]).toEqual([4, 1]);
  });

  it("takes precedence over a session: a request with both headers acts with the key's limits", async () => {
    const user = await signUp(server);
    const { key } = await newKey(user);
    expectError(await post(`${server.auth}/revoke-sessions`, {}, { bearer: user.token, ...withKey(key) }), 403, "API_KEY_SESSION_NOT_ALLOWED");
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).status).toBe(200);
  });

  it("a key is no session token, and a session token is no key", async () => {
    const user = await signUp(server);
    const { key } = await newKey(user);
    await get(`${server.auth}/get-session`, withKey(key)); // cached under the key's digest
    expect((await get(`${server.auth}/get-session`, { bearer: key })).body).toBeNull();
    expectError(await get(`${server.auth}/get-session`, withKey(user.token)), 401, "INVALID_API_KEY");
  });

  it("refuses account security with 403 API_KEY_SESSION_NOT_ALLOWED, one guard for every listed operation", async () => {
    const user = await signUp(server);
    const { id, key } = await newKey(user);
    const refused: [string, string, unknown][] = [
      ["POST", "/change-password", { currentPassword: PASSWORD, newPassword: "another password 123" }],
      ["POST", "/change-email", { newEmail: "new@example.test" }],
      ["POST", "/delete-user", { password: PASSWORD }],
      ["POST", "/two-factor/enable", { password: PASSWORD }],
      ["POST", "/two-factor/disable", { password: PASSWORD }],
      ["POST", "/two-factor/generate-backup-codes", { password: PASSWORD }],
      ["GET", "/passkey/generate-register-options", undefined],
      ["POST", "/passkey/delete-passkey", { id: "x" }],
      ["POST", "/revoke-sessions", {}],
      ["POST", "/revoke-session", { token: user.token }],
      ["POST", "/revoke-other-sessions", {}],
      ["POST", "/link-social", { provider: "github" }],
      ["POST", "/unlink-account", { providerId: "github" }],
      ["POST", "/api-key/create", {}],
      ["POST", "/api-key/update", { keyId: id, name: "x" }],
      ["POST", "/device/approve", { userCode: "ABCD-EFGH" }],
      ["POST", "/sign-in/magic-link", { email: user.email }],
    ];
    for (const [method, path, body] of refused) {
      const res = await request(method, `${server.auth}${path}`, { ...withKey(key), ...(body !== undefined ? { json: body } : {}) });
      expect([path, res.status, res.body?.code]).toEqual([path, 403, "API_KEY_SESSION_NOT_ALLOWED"]);
    }
    // Nothing changed: the sessions, the key and the password are as they were.
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).status).toBe(200);
    expect((await get(`${server.auth}/api-key/get?id=${id}`, { bearer: user.token })).body.name).toBeNull();
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD })).status).toBe(200);
  });

  it("an admin's key may not impersonate, create keys for others or set their password", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    const { key } = await newKey(admin);
    expectError(await post(`${server.auth}/admin/impersonate-user`, { userId: target.id }, withKey(key)), 403, "API_KEY_SESSION_NOT_ALLOWED");
    expectError(await post(`${server.auth}/admin/create-api-key`, { userId: target.id }, withKey(key)), 403, "API_KEY_SESSION_NOT_ALLOWED");
    expectError(await post(`${server.auth}/admin/set-user-password`, { userId: target.id, newPassword: "chosen by a key 123" }, withKey(key)), 403, "API_KEY_SESSION_NOT_ALLOWED");
    // What a key may do as an admin is the admin's: listing users.
    expect((await get(`${server.auth}/admin/list-users`, withKey(key))).status).toBe(200);
  });

  it("an impersonation may not create or change keys either (lasting access)", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    const { id } = await newKey(target);
    const start = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
    expect(start.status, start.text).toBe(200);
    const as = start.body.session.token as string;
    expectError(await post(`${server.auth}/api-key/create`, {}, { bearer: as }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await post(`${server.auth}/api-key/update`, { keyId: id, enabled: true }, { bearer: as }), 403, "IMPERSONATION_NOT_ALLOWED");
    expect((await get(`${server.auth}/api-key/list`, { bearer: as })).body.total).toBe(1);
  });
});

describe("revocation: disabled, expired, deleted, banned", () => {
  const unknown = () => get(`${server.auth}/get-session`, withKey(`pc_${"A".repeat(43)}`));

  it("an unknown or malformed key answers 401 INVALID_API_KEY, never 5xx", async () => {
    expectError(await unknown(), 401, "INVALID_API_KEY");
    for (const bad of ["x", "pc_short", "pc_" + "é".repeat(40), "a".repeat(600), "'; drop table api_keys; --x"]) {
      const res = await get(`${server.auth}/get-session`, { headers: { "x-api-key": encodeURIComponent(bad) } });
      expectError(res, 401, "INVALID_API_KEY");
    }
    expectError(await post(`${server.auth}/update-user`, { name: "x" }, withKey("pc_nope_nope_nope_nope")), 401, "INVALID_API_KEY");
  });

  it("a disabled, deleted or expired key and a banned owner's key give the unknown key's answer at once, cache or not", async () => {
    const admin = await bootstrapAdmin(server);
    const user = await signUp(server);
    const expected = await unknown();
    const check = async (key: string) => {
      const res = await get(`${server.auth}/get-session`, withKey(key));
      expect([res.status, res.body]).toEqual([expected.status, expected.body]);
    };
    const a = await newKey(user);
    expect((await get(`${server.auth}/get-session`, withKey(a.key))).status).toBe(200); // now cached
    await post(`${server.auth}/api-key/update`, { keyId: a.id, enabled: false }, { bearer: user.token });
    await check(a.key);
    await post(`${server.auth}/api-key/update`, { keyId: a.id, enabled: true }, { bearer: user.token });
    expect((await get(`${server.auth}/get-session`, withKey(a.key))).status).toBe(200);
    await post(`${server.auth}/api-key/delete`, { keyId: a.id }, { bearer: user.token });
    await check(a.key);

    const b = await newKey(user, { expiresIn: DAY / SECOND });
    expect((await get(`${server.auth}/get-session`, withKey(b.key))).status).toBe(200);
    server.clock.advance(DAY + SECOND);
    await check(b.key);

    const c = await newKey(user);
    expect((await get(`${server.auth}/get-session`, withKey(c.key))).status).toBe(200);
    expect((await adminPost(server, "ban-user", { userId: user.id }, admin.token)).status).toBe(200);
    await check(c.key);
    const verdict = await adminPost(server, "unban-user", { userId: user.id }, admin.token);
    expect(verdict.status).toBe(200);
    expect((await get(`${server.auth}/get-session`, withKey(c.key))).status).toBe(200);
  });

  it("a deleted user's keys go with them", async () => {
    const user = await signUp(server);
    const { key } = await newKey(user);
    const admin = await bootstrapAdmin(server);
    expect((await adminPost(server, "remove-user", { userId: user.id }, admin.token)).status).toBe(200);
    expectError(await get(`${server.auth}/get-session`, withKey(key)), 401, "INVALID_API_KEY");
    expect(await server.portcullis.app.orm.em.fork().count(ApiKey, { user: user.id })).toBe(0);
  });
});

describe("bad input", () => {
  it("unknown fields, wrong types and huge metadata get 4xx with {code, message}", async () => {
    const user = await signUp(server);
    const { id } = await newKey(user);
    const bodies: unknown[] = [
      { surprise: 1 }, { name: 5 }, { expiresIn: "soon" }, { expiresIn: -1 }, { metadata: "text" }, { metadata: [1, 2] },
      { metadata: { blob: "x".repeat(5000) } }, { prefix: ["a"] }, { userId: user.id },
    ];
    for (const body of bodies) {
      const res = await post(`${server.auth}/api-key/create`, body, { bearer: user.token });
      expect([JSON.stringify(body).slice(0, 40), res.status >= 400 && res.status < 500]).toEqual([JSON.stringify(body).slice(0, 40), true]);
      expect(typeof res.body.code).toBe("string");
      expect(typeof res.body.message).toBe("string");
    }
    for (const body of [{}, { keyId: 7 }, { keyId: id, enabled: "yes" }, { keyId: id, extra: true }]) {
      const res = await post(`${server.auth}/api-key/update`, body, { bearer: user.token });
      expect(res.status).toBe(400);
    }
    expect((await get(`${server.auth}/api-key/list`, { bearer: user.token })).body.total).toBe(1);
  });
});
