import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE } from "../../harness/clock.ts";
import { cookieFrom, get, post, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

const SESSION = "portcullis.session_token";
const ADMIN_SESSION = "portcullis.admin_session";

let server: TestServer;
let admin: SignedInUser;
let superadmin: SignedInUser;

beforeAll(async () => {
  server = await startTestServer({
    admin: {
      roles: {
        superadmin: {
          user: ["list", "get", "ban", "set-role", "impersonate", "impersonate-admins"],
          session: ["list", "revoke"],
          audit: ["list"],
        },
      },
      adminRoles: ["admin", "superadmin"],
    },
  });
  admin = await bootstrapAdmin(server);
  superadmin = await signUp(server);
  expect((await adminPost(server, "set-role", { userId: superadmin.id, role: "superadmin" }, admin.token)).status).toBe(200);
});
afterAll(async () => {
  await server?.close();
});

/** The `Set-Cookie` line for `name`, whole (attributes included). */
function setCookieLine(res: Reply, name: string): string | undefined {
  return res.headers.getSetCookie().find((c) => c.startsWith(`${name}=`));
}
const cookieValue = (pair: string) => pair.slice(pair.indexOf("=") + 1);

async function auditEvents(limit = 10) {
  const res = await adminGet(server, "list-audit-events", { limit }, admin.token);
  expect(res.status, res.text).toBe(200);
  return res.body.events as any[];
}

describe("impersonation", () => {
  it("cookie round trip: impersonate, act as the user, stop, and the admin's own session is back; both ends audited", async () => {
    const target = await signUp(server);
    const adminSession = (await get(`${server.auth}/get-session`, { cookie: admin.cookie })).body.session;

    const start = await post(`${server.auth}/admin/impersonate-user`, { userId: target.id }, { cookie: admin.cookie });
    expect(start.status, start.text).toBe(200);
    const now = server.clock.now().getTime();
    expect(start.body.user).toEqual(target.user);
    expect(start.body.session).toMatchObject({ userId: target.id, impersonatedBy: admin.id, expiresAt: new Date(now + 60 * MINUTE).toISOString() });
    const impCookie = cookieFrom(start.headers, SESSION)!;
    const impToken = cookieValue(impCookie);
    // better-auth's shape: the impersonation token in the body (the typed result), the header and the cookie.
    expect(start.body.session.token).toBe(impToken);
    expect(start.headers.get("set-auth-token")).toBe(impToken);
    // A browser-session cookie (better-auth's); the session itself ends after the hour.
    expect(setCookieLine(start, SESSION)).toMatch(/HttpOnly/);
    expect(setCookieLine(start, SESSION)).not.toMatch(/Max-Age/);
    // The admin's own token waits client-side, HttpOnly.
    const adminCookieLine = setCookieLine(start, ADMIN_SESSION)!;
    expect(adminCookieLine).toMatch(/HttpOnly/);
    expect(adminCookieLine).toMatch(/SameSite=Lax/);
    expect(cookieValue(cookieFrom(start.headers, ADMIN_SESSION)!)).toBe(admin.token);

    // Acting as the target.
    const browser = `${impCookie}; ${cookieFrom(start.headers, ADMIN_SESSION)}`;
    const as = await get(`${server.auth}/get-session`, { cookie: browser });
    expect(as.body.user.id).toBe(target.id);
    expect(as.body.session).toMatchObject({ id: start.body.session.id, impersonatedBy: admin.id });

    // The target never sees the impersonation in their own list; admins do.
    const own = await get(`${server.auth}/list-sessions`, { bearer: target.token });
    expect(own.body.map((s: any) => s.id)).not.toContain(start.body.session.id);
    expect(own.body).toHaveLength(1);
    const adminView = await adminPost(server, "list-user-sessions", { userId: target.id }, admin.token);
    expect(adminView.body.sessions.find((s: any) => s.id === start.body.session.id)).toMatchObject({ impersonatedBy: admin.id, userId: target.id });

    const stop = await post(`${server.auth}/admin/stop-impersonating`, undefined, { cookie: browser });
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body.user.id).toBe(admin.id);
    expect(stop.body.session).toMatchObject({ id: adminSession.id, userId: admin.id, impersonatedBy: null });
    expect(cookieFrom(stop.headers, SESSION)).toBe(admin.cookie);
    expect(setCookieLine(stop, ADMIN_SESSION)).toMatch(/^portcullis\.admin_session=; Max-Age=0/);
    // better-auth's answer: the restored token in set-auth-token too, so a bearer client that kept the
    // admin_session cookie goes on as the admin (sign-in sent the same token in that header already).
    expect(stop.headers.get("set-auth-token")).toBe(admin.token);

    expect((await get(`${server.auth}/get-session`, { cookie: impCookie })).body).toBeNull();
    expect((await get(`${server.auth}/get-session`, { cookie: admin.cookie })).body.user.id).toBe(admin.id);
    expectError(await post(`${server.auth}/admin/stop-impersonating`, undefined, { cookie: admin.cookie }), 400, "NOT_IMPERSONATING");

    const [stopped, started] = await auditEvents(2);
    expect(started).toMatchObject({
      action: "impersonate-user",
      actorId: admin.id,
      impersonatorId: admin.id,
      targetType: "user",
      targetId: target.id,
      ip: "127.0.0.1",
      metadata: { sessionId: start.body.session.id },
    });
    expect(stopped).toMatchObject({
      action: "stop-impersonating",
      actorId: target.id,
      impersonatorId: admin.id,
      targetId: target.id,
      metadata: { sessionId: start.body.session.id, restored: "admin_session" },
    });
  });

  it("bearer round trip: stop-impersonating ends the impersonation; the client goes back to its own admin token", async () => {
    const target = await signUp(server);
    const start = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
    expect(start.status, start.text).toBe(200);
    const impToken = start.headers.get("set-auth-token")!;
    expect((await get(`${server.auth}/get-session`, { bearer: impToken })).body.user.id).toBe(target.id);

    // No admin_session cookie: nothing to restore, and no new admin session.
    const stop = await adminPost(server, "stop-impersonating", undefined, impToken);
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body).toBeNull();
    expect(stop.headers.get("set-auth-token")).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: impToken })).body).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: admin.token })).body.user.id).toBe(admin.id);
    expect((await auditEvents(1))[0]).toMatchObject({ action: "stop-impersonating", impersonatorId: admin.id, metadata: { restored: "none" } });
  });

  it("an admin_session cookie that is not the impersonating admin's is ignored", async () => {
    const target = await signUp(server);
    const start = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
    const impToken = start.headers.get("set-auth-token")!;
    // Someone else's valid session in the admin_session cookie must not be handed back.
    const stop = await post(`${server.auth}/admin/stop-impersonating`, undefined, {
      cookie: `${SESSION}=${impToken}; ${ADMIN_SESSION}=${target.token}`,
    });
    expect(stop.status, stop.text).toBe(200);
    expect(stop.body).toBeNull();
    expect(setCookieLine(stop, SESSION)).toMatch(/^portcullis\.session_token=; Max-Age=0/);
    expect(stop.headers.get("set-auth-token")).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: impToken })).body).toBeNull();
  });

  it("impersonation sessions expire after an hour", async () => {
    const target = await signUp(server);
    const start = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
    const impToken = start.headers.get("set-auth-token")!;
    server.clock.advance(59 * MINUTE);
    expect((await get(`${server.auth}/get-session`, { bearer: impToken })).body.session.expiresAt).toBe(start.body.session.expiresAt);
    server.clock.advance(2 * MINUTE);
    expect((await get(`${server.auth}/get-session`, { bearer: impToken })).body).toBeNull();
    expectError(await adminPost(server, "stop-impersonating", undefined, impToken), 401, "UNAUTHORIZED");
  });

  it("admins are impersonated only with impersonate-admins; banned and unknown targets are refused", async () => {
    const someone = await signUp(server);
    const otherAdmin = await signUp(server);
    await adminPost(server, "set-role", { userId: otherAdmin.id, role: "user,admin" }, admin.token);
    expectError(await adminPost(server, "impersonate-user", { userId: otherAdmin.id }, admin.token), 403, "YOU_CANNOT_IMPERSONATE_ADMINS");
    expectError(await adminPost(server, "impersonate-user", { userId: superadmin.id }, admin.token), 403, "YOU_CANNOT_IMPERSONATE_ADMINS");
    const ok = await adminPost(server, "impersonate-user", { userId: otherAdmin.id }, superadmin.token);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.session.impersonatedBy).toBe(superadmin.id);
    // Acting as that admin works, and is audited with the impersonator...
    const asOther = ok.headers.get("set-auth-token")!;
    expect((await adminGet(server, "get-user", { id: someone.id }, asOther)).status).toBe(200);
    await adminPost(server, "set-role", { userId: someone.id, role: "user" }, asOther);
    expect((await auditEvents(1))[0]).toMatchObject({ action: "set-role", actorId: otherAdmin.id, impersonatorId: superadmin.id });
    // ...but not nesting: stopping an inner impersonation would hand out the outer admin's own session.
    expectError(await adminPost(server, "impersonate-user", { userId: someone.id }, asOther), 403, "YOU_ARE_NOT_ALLOWED_TO_IMPERSONATE_USERS");

    const banned = await signUp(server);
    await adminPost(server, "ban-user", { userId: banned.id }, admin.token);
    expectError(await adminPost(server, "impersonate-user", { userId: banned.id }, admin.token), 403, "BANNED_USER");
    expectError(await adminPost(server, "impersonate-user", { userId: "00000000-0000-4000-8000-000000000000" }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await adminPost(server, "impersonate-user", {}, admin.token), 400, "VALIDATION_ERROR");
  });

  it("an admin who is banned or loses the impersonate permission stops impersonating at once", async () => {
    const target = await signUp(server);
    const second = await signUp(server);
    await adminPost(server, "set-role", { userId: second.id, role: "admin" }, admin.token);
    const a = await adminPost(server, "impersonate-user", { userId: target.id }, second.token);
    const impA = a.headers.get("set-auth-token")!;
    await adminPost(server, "set-role", { userId: second.id, role: "user" }, superadmin.token);
    expect((await get(`${server.auth}/get-session`, { bearer: impA })).body).toBeNull();

    await adminPost(server, "set-role", { userId: second.id, role: "admin" }, superadmin.token);
    const b = await adminPost(server, "impersonate-user", { userId: target.id }, second.token);
    const impB = b.headers.get("set-auth-token")!;
    expect((await get(`${server.auth}/get-session`, { bearer: impB })).body.user.id).toBe(target.id);
    expect((await adminPost(server, "ban-user", { userId: second.id }, superadmin.token)).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: impB })).body).toBeNull();
    // The target's own session is untouched.
    expect((await get(`${server.auth}/get-session`, { bearer: target.token })).body.user.id).toBe(target.id);
  });

  it("honours admin.impersonationSessionDuration", async () => {
    const other = await startTestServer({ admin: { impersonationSessionDuration: 120 } });
    try {
      const root = await bootstrapAdmin(other);
      const target = await signUp(other);
      const res = await adminPost(other, "impersonate-user", { userId: target.id }, root.token);
      expect(res.body.session.expiresAt).toBe(new Date(other.clock.now().getTime() + 120_000).toISOString());
      // A browser-session cookie (better-auth's); the 120 s are the session's own expiry.
      expect(setCookieLine(res, SESSION)).not.toMatch(/Max-Age/);
      expect(res.body.session.token).toBe(res.headers.get("set-auth-token"));
    } finally {
      await other.close();
    }
  });
});

describe("admin session control", () => {
  it("list-user-sessions lists live sessions by id with revocation handles (never tokens); none for an unknown user", async () => {
    const user = await signUp(server);
    const second = await signIn(server, user.email);
    const res = await adminPost(server, "list-user-sessions", { userId: user.id }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.sessions).toHaveLength(2);
    for (const s of res.body.sessions) {
      expect(Object.keys(s).sort()).toEqual(["activeOrganizationId", "activeTeamId", "createdAt", "expiresAt", "id", "impersonatedBy", "ipAddress", "token", "updatedAt", "userAgent", "userId"]);
      expect(s.userId).toBe(user.id);
      expect(JSON.stringify(s)).not.toContain(user.token);
      expect(JSON.stringify(s)).not.toContain(second.token);
      expect(s.token).toMatch(/^sh\./);
    }
    const ownIds = (await get(`${server.auth}/list-sessions`, { bearer: second.token })).body.map((s: any) => s.id).sort();
    expect(res.body.sessions.map((s: any) => s.id).sort()).toEqual(ownIds);
    // An unknown user has no sessions (better-auth's admin plugin answers the same).
    const unknown = await adminPost(server, "list-user-sessions", { userId: "00000000-0000-4000-8000-000000000000" }, admin.token);
    expect(unknown.status, unknown.text).toBe(200);
    expect(unknown.body).toEqual({ sessions: [] });
    expectError(await adminPost(server, "list-user-sessions", {}, admin.token), 400, "VALIDATION_ERROR");
  });

  it("revoke-user-session by id or by token ends just that session, and is audited", async () => {
    const user = await signUp(server);
    const s2 = await signIn(server, user.email);
    const s3 = await signIn(server, user.email);
    const id2 = (await get(`${server.auth}/get-session`, { bearer: s2.token })).body.session.id;

    const byId = await adminPost(server, "revoke-user-session", { sessionId: id2 }, admin.token);
    expect(byId.status, byId.text).toBe(200);
    expect(byId.body).toEqual({ success: true });
    expect((await get(`${server.auth}/get-session`, { bearer: s2.token })).body).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: s3.token })).body.user.id).toBe(user.id);
    expect((await auditEvents(1))[0]).toMatchObject({ action: "revoke-user-session", targetType: "session", targetId: id2, actorId: admin.id, metadata: { userId: user.id } });

    expect((await adminPost(server, "revoke-user-session", { sessionToken: s3.token }, admin.token)).body).toEqual({ success: true });
    expect((await get(`${server.auth}/get-session`, { bearer: s3.token })).body).toBeNull();
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body.user.id).toBe(user.id);
    const id1 = (await get(`${server.auth}/get-session`, { bearer: user.token })).body.session.id;
    expect((await adminPost(server, "revoke-user-session", { id: id1 }, admin.token)).body).toEqual({ success: true });
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body).toBeNull();

    expectError(await adminPost(server, "revoke-user-session", { sessionId: id2 }, admin.token), 400, "SESSION_NOT_FOUND");
    expectError(await adminPost(server, "revoke-user-session", { sessionToken: "no-such-token-000000000000" }, admin.token), 400, "SESSION_NOT_FOUND");
    expectError(await adminPost(server, "revoke-user-session", {}, admin.token), 400, "VALIDATION_ERROR");
  });

  it("revoke-user-sessions ends all of a user's sessions; success for an unknown user", async () => {
    const user = await signUp(server);
    const s2 = await signIn(server, user.email);
    const res = await adminPost(server, "revoke-user-sessions", { userId: user.id }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ success: true });
    for (const t of [user.token, s2.token]) expect((await get(`${server.auth}/get-session`, { bearer: t })).body).toBeNull();
    expect((await auditEvents(1))[0]).toMatchObject({ action: "revoke-user-sessions", targetId: user.id, metadata: { revoked: 2 } });
    // An unknown user: nothing to revoke, success all the same (better-auth's admin plugin), and audited.
    const unknown = await adminPost(server, "revoke-user-sessions", { userId: "00000000-0000-4000-8000-000000000000" }, admin.token);
    expect(unknown.status, unknown.text).toBe(200);
    expect(unknown.body).toEqual({ success: true });
    expect((await auditEvents(1))[0]).toMatchObject({ action: "revoke-user-sessions", targetId: "00000000-0000-4000-8000-000000000000", metadata: { revoked: 0 } });
  });
});
