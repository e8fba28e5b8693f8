import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorCode, createPortcullisClient, isPortcullisClientError } from "portcullis/client";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

let server: TestServer;
let admin: SignedInUser;
let plain: SignedInUser;

beforeAll(async () => {
  server = await startTestServer({
    admin: {
      roles: {
        support: { user: ["list", "get"], session: ["list"] },
        auditor: { audit: ["list"] },
        creator: { user: ["create"] },
        editor: { user: ["update"] },
      },
    },
  });
  admin = await bootstrapAdmin(server);
  plain = await signUp(server);
});
afterAll(async () => {
  await server?.close();
});

/** Every admin endpoint with a well-formed input and the 403 code better-auth gives a caller without the permission. */
function endpoints(userId: string) {
  return [
    { method: "POST", path: "create-user", body: { email: uniqueEmail("x"), name: "X" }, denied: "YOU_ARE_NOT_ALLOWED_TO_CREATE_USERS" },
    { method: "GET", path: "get-user", query: { id: userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_GET_USER" },
    { method: "POST", path: "update-user", body: { userId, data: { name: "N" } }, denied: "YOU_ARE_NOT_ALLOWED_TO_UPDATE_USERS" },
    { method: "POST", path: "set-role", body: { userId, role: "user" }, denied: "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE" },
    { method: "GET", path: "list-users", query: {}, denied: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS" },
    { method: "POST", path: "set-user-password", body: { userId, newPassword: "another password" }, denied: "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_PASSWORD" },
    { method: "POST", path: "remove-user", body: { userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_DELETE_USERS" },
    { method: "POST", path: "ban-user", body: { userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS" },
    { method: "POST", path: "unban-user", body: { userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS" },
    { method: "POST", path: "impersonate-user", body: { userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS" },
    { method: "POST", path: "list-user-sessions", body: { userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS" },
    { method: "POST", path: "revoke-user-session", body: { sessionId: userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS" },
    { method: "POST", path: "revoke-user-sessions", body: { userId }, denied: "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS" },
    { method: "GET", path: "list-audit-events", query: {}, denied: "YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS" },
  ] as const;
}

function call(e: ReturnType<typeof endpoints>[number], token?: string) {
  return e.method === "GET" ? adminGet(server, e.path, "query" in e ? e.query : {}, token) : adminPost(server, e.path, "body" in e ? e.body : {}, token);
}

async function withRole(role: string): Promise<SignedInUser> {
  const u = await signUp(server);
  const res = await adminPost(server, "set-role", { userId: u.id, role }, admin.token);
  expect(res.status, res.text).toBe(200);
  return u;
}

describe("admin permissions", () => {
  it("answers 401 UNAUTHORIZED to every admin endpoint without a session (and has-permission, stop-impersonating)", async () => {
    for (const e of endpoints(plain.id)) expectError(await call(e), 401, "UNAUTHORIZED");
    expectError(await adminPost(server, "has-permission", { permissions: { user: ["list"] } }), 401, "UNAUTHORIZED");
    expectError(await adminPost(server, "stop-impersonating", undefined), 401, "UNAUTHORIZED");
    expectError(await adminGet(server, "list-users", {}, "not-a-real-session-token-0123456789"), 401, "UNAUTHORIZED");
  });

  it("answers 403 with better-auth's code for each endpoint a plain user calls, changing nothing", async () => {
    const victim = await signUp(server);
    for (const e of endpoints(victim.id)) expectError(await call(e, plain.token), 403, e.denied);
    const still = await get(`${server.auth}/get-session`, { bearer: victim.token });
    expect(still.body.user).toMatchObject({ id: victim.id, role: "user", banned: false, name: "Test User" });
  });

  it("checks the permission before validating the input (no probing by validation errors)", async () => {
    expectError(await adminPost(server, "ban-user", {}, plain.token), 403, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS");
    expectError(await adminPost(server, "ban-user", {}, admin.token), 400, "VALIDATION_ERROR");
  });

  it("has-permission answers for the caller: admin, plain user, old `permission` key, unknown resource", async () => {
    const ask = (token: string, body: unknown) => adminPost(server, "has-permission", body, token);
    expect((await ask(admin.token, { permissions: { user: ["list", "ban"], session: ["revoke"] } })).body).toEqual({ success: true, error: null });
    expect((await ask(admin.token, { permissions: { audit: ["list"] } })).body).toEqual({ success: true, error: null });
    // The built-in admin role does not impersonate other admins.
    expect((await ask(admin.token, { permissions: { user: ["impersonate-admins"] } })).body).toEqual({ success: false, error: null });
    expect((await ask(admin.token, { permission: { user: ["delete"] } })).body).toEqual({ success: true, error: null });
    expect((await ask(admin.token, { permissions: { billing: ["read"] } })).body).toEqual({ success: false, error: null });
    expect((await ask(plain.token, { permissions: { user: ["list"] } })).body).toEqual({ success: false, error: null });
    expect((await ask(plain.token, { permissions: {} })).body).toEqual({ success: false, error: null });
    expectError(await ask(admin.token, {}), 400, "VALIDATION_ERROR");
    expectError(await ask(admin.token, { permissions: { user: "list" } }), 400, "VALIDATION_ERROR");
  });

  it("a custom role from config grants exactly its actions", async () => {
    const support = await withRole("support");
    expect((await adminGet(server, "list-users", { limit: 1 }, support.token)).status).toBe(200);
    expect((await adminGet(server, "get-user", { id: plain.id }, support.token)).body.id).toBe(plain.id);
    expect((await adminPost(server, "list-user-sessions", { userId: plain.id }, support.token)).status).toBe(200);
    expectError(await adminPost(server, "ban-user", { userId: plain.id }, support.token), 403, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS");
    expectError(await adminPost(server, "revoke-user-sessions", { userId: plain.id }, support.token), 403, "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS");
    expectError(await adminGet(server, "list-audit-events", {}, support.token), 403, "YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS");
  });

  it("several roles: a check passes when ONE role grants every requested action", async () => {
    const both = await withRole("support,auditor");
    expect((await adminGet(server, "list-users", { limit: 1 }, both.token)).status).toBe(200);
    expect((await adminGet(server, "list-audit-events", { limit: 1 }, both.token)).status).toBe(200);
    const ask = (permissions: unknown) => adminPost(server, "has-permission", { permissions }, both.token);
    expect((await ask({ user: ["list", "get"] })).body.success).toBe(true);
    expect((await ask({ audit: ["list"] })).body.success).toBe(true);
    // support lists users, auditor lists audit events: no single role grants both.
    expect((await ask({ user: ["list"], audit: ["list"] })).body.success).toBe(false);
    // An array role is stored comma-joined.
    const arr = await signUp(server);
    const set = await adminPost(server, "set-role", { userId: arr.id, role: ["auditor", "support"] }, admin.token);
    expect(set.body.user.role).toBe("auditor,support");
  });

  it("create-user with a role also needs set-role; update-user's email, role and ban fields need their permissions", async () => {
    const creator = await withRole("creator");
    const made = await adminPost(server, "create-user", { email: uniqueEmail("made"), name: "Made" }, creator.token);
    expect(made.status, made.text).toBe(200);
    expect(made.body.user.role).toBe("user");
    expectError(await adminPost(server, "create-user", { email: uniqueEmail(), name: "R", role: "admin" }, creator.token), 403, "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE");
    expectError(await adminPost(server, "create-user", { email: uniqueEmail(), name: "R", data: { role: "admin" } }, creator.token), 403, "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE");

    const editor = await withRole("editor");
    const target = made.body.user.id as string;
    const renamed = await adminPost(server, "update-user", { userId: target, data: { name: "Renamed" } }, editor.token);
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body.name).toBe("Renamed");
    expectError(await adminPost(server, "update-user", { userId: target, data: { email: uniqueEmail() } }, editor.token), 403, "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL");
    expectError(await adminPost(server, "update-user", { userId: target, data: { emailVerified: true } }, editor.token), 403, "YOU_ARE_NOT_ALLOWED_TO_SET_USERS_EMAIL");
    expectError(await adminPost(server, "update-user", { userId: target, data: { role: "admin" } }, editor.token), 403, "YOU_ARE_NOT_ALLOWED_TO_CHANGE_USERS_ROLE");
    expectError(await adminPost(server, "update-user", { userId: target, data: { banned: true } }, editor.token), 403, "YOU_ARE_NOT_ALLOWED_TO_BAN_USERS");
  });
});

describe("admin users", () => {
  it("create-user with a password: the user signs in; without one: no credential account", async () => {
    const email = uniqueEmail("Created").toUpperCase();
    const res = await adminPost(server, "create-user", { email, password: PASSWORD, name: "Created", data: { emailVerified: true, username: "Created_1" } }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ email: email.toLowerCase(), name: "Created", role: "user", emailVerified: true, username: "created_1", displayUsername: "Created_1", banned: false });
    await signIn(server, email.toLowerCase());

    const bare = await adminPost(server, "create-user", { email: uniqueEmail("bare"), name: "Bare", role: ["support", "auditor"] }, admin.token);
    expect(bare.status, bare.text).toBe(200);
    expect(bare.body.user.role).toBe("support,auditor");
    expectError(await post(`${server.auth}/sign-in/email`, { email: bare.body.user.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
  });

  it("create-user errors: 409 taken email, 400 bad email / short password / unknown role / missing name", async () => {
    expectError(await adminPost(server, "create-user", { email: plain.email, name: "Dup" }, admin.token), 409, "USER_ALREADY_EXISTS");
    expectError(await adminPost(server, "create-user", { email: "not-an-email", name: "Bad" }, admin.token), 400, "INVALID_EMAIL");
    expectError(await adminPost(server, "create-user", { email: uniqueEmail(), name: "Short", password: "short" }, admin.token), 400, "PASSWORD_TOO_SHORT");
    expectError(await adminPost(server, "create-user", { email: uniqueEmail(), name: "Role", role: "superhero" }, admin.token), 400, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE");
    expectError(await adminPost(server, "create-user", { email: uniqueEmail() }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminPost(server, "create-user", { email: uniqueEmail(), name: "X", data: { banned: true } }, admin.token), 400, "VALIDATION_ERROR");
  });

  it("get-user returns the bare user; 404 USER_NOT_FOUND for an unknown id; 400 without id", async () => {
    const res = await adminGet(server, "get-user", { id: plain.id }, admin.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(plain.user);
    expectError(await adminGet(server, "get-user", { id: "00000000-0000-4000-8000-000000000000" }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await adminGet(server, "get-user", { id: "nope" }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await adminGet(server, "get-user", {}, admin.token), 400, "VALIDATION_ERROR");
  });

  it("update-user changes fields, returns the bare user, and the user's own session sees it at once", async () => {
    const u = await signUp(server);
    const newEmail = uniqueEmail("NEW");
    const res = await adminPost(server, "update-user", { userId: u.id, data: { name: "Updated", email: newEmail, emailVerified: true, username: "Upd.User" } }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ id: u.id, name: "Updated", email: newEmail.toLowerCase(), emailVerified: true, username: "upd.user", displayUsername: "Upd.User" });
    expect(res.body.user).toBeUndefined();
    const own = await get(`${server.auth}/get-session`, { bearer: u.token });
    expect(own.body.user).toMatchObject({ name: "Updated", email: newEmail.toLowerCase() });
    await signIn(server, newEmail.toLowerCase());
  });

  it("update-user errors: 400 empty data, password, unknown field, bad email; 409 taken email; 404", async () => {
    const u = await signUp(server);
    expectError(await adminPost(server, "update-user", { userId: u.id, data: {} }, admin.token), 400, "NO_DATA_TO_UPDATE");
    expectError(await adminPost(server, "update-user", { userId: u.id, data: { password: "x" } }, admin.token), 400, "PASSWORD_CANNOT_BE_UPDATED_VIA_UPDATE_USER");
    expectError(await adminPost(server, "update-user", { userId: u.id, data: { isAdmin: true } }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminPost(server, "update-user", { userId: u.id, data: { email: "bad" } }, admin.token), 400, "INVALID_EMAIL");
    expectError(await adminPost(server, "update-user", { userId: u.id, data: { email: plain.email } }, admin.token), 409, "USER_ALREADY_EXISTS");
    expectError(await adminPost(server, "update-user", { userId: u.id, data: { role: "nope" } }, admin.token), 400, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE");
    expectError(await adminPost(server, "update-user", { userId: "00000000-0000-4000-8000-000000000000", data: { name: "x" } }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await adminPost(server, "update-user", { userId: admin.id, data: { banned: true } }, admin.token), 400, "YOU_CANNOT_BAN_YOURSELF");
    // Nothing of the failed updates landed.
    expect((await adminGet(server, "get-user", { id: u.id }, admin.token)).body).toEqual(u.user);
  });

  it("set-role wraps { user }, is seen by the user's session at once, and rejects unknown roles and users", async () => {
    const u = await signUp(server);
    const res = await adminPost(server, "set-role", { userId: u.id, role: "admin" }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ id: u.id, role: "admin" });
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.user.role).toBe("admin");
    // The new admin can act at once.
    expect((await adminGet(server, "list-users", { limit: 1 }, u.token)).status).toBe(200);
    expectError(await adminPost(server, "set-role", { userId: u.id, role: "root" }, admin.token), 400, "YOU_ARE_NOT_ALLOWED_TO_SET_NON_EXISTENT_VALUE");
    expectError(await adminPost(server, "set-role", { userId: u.id, role: "" }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminPost(server, "set-role", { userId: "00000000-0000-4000-8000-000000000000", role: "user" }, admin.token), 404, "USER_NOT_FOUND");
  });

  it("set-user-password replaces the password (or creates the credential account) with the length rules", async () => {
    const u = await signUp(server);
    const res = await adminPost(server, "set-user-password", { userId: u.id, newPassword: "brand new password" }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: true });
    expectError(await post(`${server.auth}/sign-in/email`, { email: u.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
    await signIn(server, u.email, "brand new password");

    const bare = await adminPost(server, "create-user", { email: uniqueEmail("nopw"), name: "No Password" }, admin.token);
    await adminPost(server, "set-user-password", { userId: bare.body.user.id, newPassword: "first password!" }, admin.token);
    await signIn(server, bare.body.user.email, "first password!");

    expectError(await adminPost(server, "set-user-password", { userId: u.id, newPassword: "short" }, admin.token), 400, "PASSWORD_TOO_SHORT");
    expectError(await adminPost(server, "set-user-password", { userId: u.id, newPassword: "x".repeat(129) }, admin.token), 400, "PASSWORD_TOO_LONG");
    expectError(await adminPost(server, "set-user-password", { userId: "00000000-0000-4000-8000-000000000000", newPassword: "long enough pw" }, admin.token), 404, "USER_NOT_FOUND");
  });

  it("remove-user deletes the user, their sessions and accounts; nobody removes themselves", async () => {
    const u = await signUp(server);
    const res = await adminPost(server, "remove-user", { userId: u.id }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true });
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body).toBeNull();
    expectError(await adminGet(server, "get-user", { id: u.id }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await post(`${server.auth}/sign-in/email`, { email: u.email, password: PASSWORD }), 401, "INVALID_EMAIL_OR_PASSWORD");
    // The email is free again: the account row went too.
    expect((await signUp(server, { email: u.email })).id).not.toBe(u.id);
    expectError(await adminPost(server, "remove-user", { userId: u.id }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await adminPost(server, "remove-user", { userId: admin.id }, admin.token), 400, "YOU_CANNOT_REMOVE_YOURSELF");
  });

  it("sign-up assigns the configured default role", async () => {
    const other = await startTestServer({ admin: { roles: { member: {} }, defaultRole: "member" } });
    try {
      const u = await signUp(other);
      expect(u.user.role).toBe("member");
    } finally {
      await other.close();
    }
  });
});

describe("audit trail", () => {
  it("every admin action writes a record (actor, action, target, ip, user agent), listed newest first; failures write none", async () => {
    const u = await signUp(server);
    const before = (await adminGet(server, "list-audit-events", { limit: 1 }, admin.token)).body.total as number;
    const ua = { "user-agent": "audit-test/1.0" };
    await post(`${server.auth}/admin/set-role`, { userId: u.id, role: "support" }, { bearer: admin.token, headers: ua });
    await post(`${server.auth}/admin/update-user`, { userId: u.id, data: { name: "Audited" } }, { bearer: admin.token, headers: ua });
    await post(`${server.auth}/admin/ban-user`, { userId: u.id, banReason: "spam" }, { bearer: admin.token, headers: ua });
    await post(`${server.auth}/admin/unban-user`, { userId: u.id }, { bearer: admin.token, headers: ua });
    // Rolled back, so not recorded.
    expectError(await adminPost(server, "update-user", { userId: u.id, data: { email: plain.email } }, admin.token), 409, "USER_ALREADY_EXISTS");

    const res = await adminGet(server, "list-audit-events", { limit: 4 }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ total: before + 4, limit: 4, offset: 0 });
    expect(res.body.events.map((e: any) => e.action)).toEqual(["unban-user", "ban-user", "update-user", "set-role"]);
    for (const e of res.body.events) {
      expect(e).toMatchObject({ actorId: admin.id, impersonatorId: null, targetType: "user", targetId: u.id, ip: "127.0.0.1", userAgent: "audit-test/1.0" });
      expect(new Date(e.createdAt).toISOString()).toBe(e.createdAt);
    }
    expect(res.body.events[1].metadata).toMatchObject({ banReason: "spam", banExpires: null });
    expect(res.body.events[3].metadata).toMatchObject({ role: "support", previous: "user" });

    const page2 = await adminGet(server, "list-audit-events", { limit: 2, offset: 2 }, admin.token);
    expect(page2.body.events.map((e: any) => e.action)).toEqual(["update-user", "set-role"]);
    expectError(await adminGet(server, "list-audit-events", { limit: 0 }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminGet(server, "list-audit-events", { limit: "abc" }, admin.token), 400, "VALIDATION_ERROR");
  });
});

describe("typed client (admin.*)", () => {
  it("calls admin procedures with types, and failures carry the contract's code and status", async () => {
    const client = createPortcullisClient({ url: server.url, token: admin.token });
    const list = await client.admin.listUsers.query({ limit: 2, searchValue: admin.email, searchOperator: "starts_with" });
    expect(list).toMatchObject({ total: 1, limit: 2, offset: 0 });
    expect(list.users[0]!.id).toBe(admin.id);
    expect((await client.admin.listUsers.query({ limit: 3, offset: 1 })).users).toHaveLength(3);
    const user = await client.admin.getUser.query({ id: plain.id });
    expect(user.email).toBe(plain.email);
    expect(await client.admin.hasPermission.mutate({ permissions: { user: ["ban"] } })).toEqual({ success: true, error: null });
    const created = await client.admin.createUser.mutate({ email: uniqueEmail("typed"), name: "Typed" });
    expect(created.user.role).toBe("user");
    const events = await client.admin.listAuditEvents.query();
    expect(events.events[0]).toMatchObject({ action: "create-user", targetId: created.user.id, actorId: admin.id });

    const asUser = createPortcullisClient({ url: server.url, token: plain.token });
    try {
      await asUser.admin.listUsers.query({});
      throw new Error("expected a failure");
    } catch (err) {
      expect(isPortcullisClientError(err)).toBe(true);
      expect(authErrorCode(err)).toBe("YOU_ARE_NOT_ALLOWED_TO_LIST_USERS");
      if (isPortcullisClientError(err)) expect(err.data?.httpStatus).toBe(403);
    }
    try {
      await client.admin.getUser.query({ id: "00000000-0000-4000-8000-000000000000" });
      throw new Error("expected a failure");
    } catch (err) {
      expect(authErrorCode(err)).toBe("USER_NOT_FOUND");
    }
  });
});
