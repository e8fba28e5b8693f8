import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorCode, createPortcullisClient, type PortcullisClient } from "portcullis/client";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { bootstrapAdmin, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * What the admin console reads besides better-auth's admin routes (tRPC only): a user's linked
 * accounts and claimed device codes, and the audit log filtered by action, actor, target or user.
 */

let server: TestServer;
let admin: SignedInUser;
let plain: SignedInUser;
let asAdmin: PortcullisClient;

const clientFor = (token: string) => createPortcullisClient({ url: server.url, token });

beforeAll(async () => {
  server = await startTestServer({ admin: { roles: { viewer: { user: ["list"] } } } });
  admin = await bootstrapAdmin(server);
  plain = await signUp(server);
  asAdmin = clientFor(admin.token);
});
afterAll(async () => {
  await server?.close();
});

async function refusal(call: Promise<unknown>): Promise<string | undefined> {
  try {
    await call;
  } catch (err) {
    return authErrorCode(err);
  }
  throw new Error("the call succeeded");
}

describe("a user's accounts and device codes", () => {
  it("lists the linked accounts without secrets; an unknown id has none", async () => {
    const { accounts } = await asAdmin.admin.listUserAccounts.query({ userId: plain.id });
    expect(accounts).toHaveLength(1);
    expect(accounts[0]).toMatchObject({ providerId: "credential", accountId: plain.id, userId: plain.id, scopes: [] });
    expect(Object.keys(accounts[0]!).sort()).toEqual(["accountId", "createdAt", "id", "providerId", "scopes", "updatedAt", "userId"]);
    expect((await asAdmin.admin.listUserAccounts.query({ userId: "not-a-uuid" })).accounts).toEqual([]);
  });

  it("lists the device codes the user claimed, without the user code", async () => {
    const code = await post(`${server.auth}/device/code`, { client_id: "tv-app", scope: "openid" });
    expect(code.status, code.text).toBe(200);
    const claimed = await get(`${server.auth}/device?user_code=${code.body.user_code}`, { bearer: plain.token });
    expect(claimed.status, claimed.text).toBe(200);
    const { deviceCodes } = await asAdmin.admin.listUserDeviceCodes.query({ userId: plain.id });
    expect(deviceCodes).toHaveLength(1);
    expect(deviceCodes[0]).toMatchObject({ clientId: "tv-app", scope: "openid", status: "pending", lastPolledAt: null });
    expect(JSON.stringify(deviceCodes)).not.toContain(code.body.user_code.replace("-", ""));
    expect((await asAdmin.admin.listUserDeviceCodes.query({ userId: admin.id })).deviceCodes).toEqual([]);
  });

  it("needs user:get", async () => {
    const viewer = await signUp(server);
    await asAdmin.admin.setRole.mutate({ userId: viewer.id, role: "viewer" });
    for (const as of [clientFor(plain.token), clientFor(viewer.token)]) {
      expect(await refusal(as.admin.listUserAccounts.query({ userId: plain.id }))).toBe("YOU_ARE_NOT_ALLOWED_TO_GET_USER");
      expect(await refusal(as.admin.listUserDeviceCodes.query({ userId: plain.id }))).toBe("YOU_ARE_NOT_ALLOWED_TO_GET_USER");
    }
    expect(await refusal(createPortcullisClient({ url: server.url }).admin.listUserAccounts.query({ userId: plain.id }))).toBe("UNAUTHORIZED");
  });
});

describe("audit log filters", () => {
  it("filters by action, actor, target and user (actor, impersonator or target), with matching totals", async () => {
    const a = await signUp(server);
    const b = await signUp(server);
    await asAdmin.admin.banUser.mutate({ userId: a.id, banReason: "spam" });
    await asAdmin.admin.setRole.mutate({ userId: b.id, role: "admin" });
    const started = await asAdmin.admin.impersonateUser.mutate({ userId: plain.id });
    await clientFor(started.session.token).admin.stopImpersonating.mutate();

    const byUserA = await asAdmin.admin.listAuditEvents.query({ userId: a.id });
    expect(byUserA.events.map((e) => e.action)).toEqual(["ban-user"]);
    expect(byUserA.total).toBe(1);
    expect(byUserA.events[0]).toMatchObject({ actorId: admin.id, targetId: a.id, metadata: { banReason: "spam" } });

    const bans = await asAdmin.admin.listAuditEvents.query({ action: "ban-user" });
    expect(bans.events.every((e) => e.action === "ban-user")).toBe(true);
    expect(bans.total).toBe(bans.events.length);

    const onB = await asAdmin.admin.listAuditEvents.query({ targetId: b.id, action: "set-role" });
    expect(onB.events).toHaveLength(1);
    expect(await asAdmin.admin.listAuditEvents.query({ targetId: b.id, action: "ban-user" })).toMatchObject({ events: [], total: 0 });

    // The impersonated user: the start targets them, the stop is theirs with the admin as impersonator.
    const aboutPlain = await asAdmin.admin.listAuditEvents.query({ userId: plain.id });
    expect(aboutPlain.events.map((e) => e.action)).toEqual(["stop-impersonating", "impersonate-user"]);
    const byAdmin = await asAdmin.admin.listAuditEvents.query({ actorId: admin.id, limit: 2 });
    expect(byAdmin.events).toHaveLength(2);
    expect(byAdmin.total).toBeGreaterThanOrEqual(3);
    expect(byAdmin.events.every((e) => e.actorId === admin.id)).toBe(true);

    // Not a UUID: no match (PostgreSQL's uuid column would otherwise refuse the query).
    expect(await asAdmin.admin.listAuditEvents.query({ actorId: "nobody" })).toMatchObject({ events: [], total: 0 });
    expect(await asAdmin.admin.listAuditEvents.query({ userId: "nobody" })).toMatchObject({ events: [], total: 0 });
  });

  it("the REST route takes the same filters from the query string", async () => {
    const res = await get(`${server.auth}/admin/list-audit-events?action=ban-user&limit=1`, { bearer: admin.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body.events).toHaveLength(1);
    expect(res.body.events[0].action).toBe("ban-user");
  });
});
