import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AuditEvent } from "../../../src/db/entities/index.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { DAY } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * Sign-ins in the audit trail (docs/operations.md "Audit"): a session issued is a `sign-in`, a
 * refusal a `sign-in-failed` with its reason, both with the method, IP and user agent; the trail
 * streams out of GET /admin/export-audit-events as NDJSON (filters, a cursor to resume), and the
 * sweeper prunes it past `sweeper.auditRetentionDays` in batches.
 */

let server: TestServer;
let admin: SignedInUser;
let alice: SignedInUser;
const IP = "198.51.100.23";
const UA = "audit-test-agent/1.0";
const from = { "x-forwarded-for": IP, "user-agent": UA };

async function eventsOf(where: Record<string, unknown>) {
  const rows = await server.portcullis.app.orm.em.fork().find(AuditEvent, where as never, { orderBy: { id: "asc" } });
  return rows.map((e) => ({ ...e, metadata: e.metadata ? JSON.parse(e.metadata) : null }));
}

/** The NDJSON export, parsed line by line. */
async function exportEvents(query: Record<string, string>, token = admin.token) {
  const res = await fetch(`${server.auth}/admin/export-audit-events?${new URLSearchParams(query)}`, { headers: { authorization: `Bearer ${token}` } });
  const text = await res.text();
  return { res, text, lines: res.status === 200 ? text.split("\n").filter(Boolean).map((l) => JSON.parse(l)) : [] };
}

beforeAll(async () => {
  server = await startTestServer({ trustProxy: true, sweeper: { intervalSec: 0, batchSize: 2, auditRetentionDays: 30 } });
  admin = await bootstrapAdmin(server);
  alice = await signUp(server, { username: "alice_audit" });
});
afterAll(() => server?.close());

describe(`sign-ins in the audit trail (${testDialect})`, () => {
  it("a password sign-in records who, how, from where; a refusal records its reason and the user it named, never the password", async () => {
    const ok = await post(`${server.auth}/sign-in/email`, { email: alice.email, password: PASSWORD }, { headers: from });
    expect(ok.status, ok.text).toBe(200);
    const wrong = await post(`${server.auth}/sign-in/email`, { email: alice.email, password: "not-alices-password-1" }, { headers: from });
    expect(wrong.status).toBe(401);
    const unknown = await post(`${server.auth}/sign-in/email`, { email: uniqueEmail("nobody"), password: "whatever-password-1" }, { headers: from });
    expect(unknown.status).toBe(401);
    const byName = await post(`${server.auth}/sign-in/username`, { username: "alice_audit", password: PASSWORD }, { headers: from });
    expect(byName.status, byName.text).toBe(200);
    // a malformed request is no attempt: nothing recorded
    expect((await post(`${server.auth}/sign-in/email`, { email: "not an address", password: 1 }, { headers: from })).status).toBe(400);

    const events = await eventsOf({ ip: IP });
    expect(events.map((e) => [e.action, e.metadata])).toEqual([
      ["sign-in", { method: "email" }],
      ["sign-in-failed", { method: "email", reason: "INVALID_EMAIL_OR_PASSWORD" }],
      ["sign-in-failed", { method: "email", reason: "INVALID_EMAIL_OR_PASSWORD" }],
      ["sign-in", { method: "username" }],
    ]);
    expect(events[0]).toMatchObject({ actorId: alice.id, targetType: "user", targetId: alice.id, ip: IP, userAgent: UA });
    // a refusal has no actor (whoever tried is not known to be the user); the wrong password names alice, the unknown address nobody
    expect(events[1]).toMatchObject({ actorId: null, targetId: alice.id });
    expect(events[2]).toMatchObject({ actorId: null, targetId: null });
    const text = JSON.stringify(events);
    for (const secret of [PASSWORD, "not-alices-password-1", ok.body.token, byName.body.token]) expect(text).not.toContain(secret);
  });

  it("a banned user's attempt is a failure with BANNED_USER", async () => {
    const mallory = await signUp(server);
    expect((await adminPost(server, "ban-user", { userId: mallory.id, banReason: "spam" }, admin.token)).status).toBe(200);
    const res = await post(`${server.auth}/sign-in/email`, { email: mallory.email, password: PASSWORD }, { headers: { ...from, "x-forwarded-for": "198.51.100.99" } });
    expect(res.status).toBe(403);
    const [event] = await eventsOf({ ip: "198.51.100.99" });
    expect(event).toMatchObject({ action: "sign-in-failed", targetId: mallory.id, metadata: { method: "email", reason: "BANNED_USER" } });
  });

  it("list-audit-events filters by the new actions; the export streams NDJSON oldest first and resumes from a cursor", async () => {
    const listed = await adminGet(server, "list-audit-events", { action: "sign-in-failed" }, admin.token);
    expect(listed.status, listed.text).toBe(200);
    expect(listed.body.events.length).toBeGreaterThanOrEqual(3);

    const all = await exportEvents({});
    expect(all.res.status, all.text).toBe(200);
    expect(all.res.headers.get("content-type")).toBe("application/x-ndjson; charset=utf-8");
    expect(all.text.endsWith("\n")).toBe(true);
    const ids = all.lines.map((e) => e.id);
    expect(ids).toEqual([...ids].sort()); // oldest first (UUIDv7)
    expect(all.lines.length).toBe(await server.portcullis.app.orm.em.fork().count(AuditEvent, {}));
    const signIn = all.lines.find((e) => e.action === "sign-in" && e.ip === IP)!;
    expect(signIn).toEqual({
      id: expect.any(String), actorId: alice.id, impersonatorId: null, action: "sign-in", targetType: "user", targetId: alice.id,
      ip: IP, userAgent: UA, metadata: { method: "email" }, createdAt: expect.any(String),
    });

    // pages of 2 stream as one answer: the same events
    const paged = await exportEvents({ limit: "2" });
    expect(paged.lines.map((e) => e.id)).toEqual(ids);
    // resume after the third: the rest
    const resumed = await exportEvents({ cursor: ids[2]!, limit: "2" });
    expect(resumed.lines.map((e) => e.id)).toEqual(ids.slice(3));
    // filters
    const failed = await exportEvents({ action: "sign-in-failed" });
    expect(failed.lines.length).toBeGreaterThanOrEqual(3);
    expect(failed.lines.every((e) => e.action === "sign-in-failed")).toBe(true);
    const alices = await exportEvents({ userId: alice.id });
    expect(alices.lines.length).toBeGreaterThan(0);
    expect(alices.lines.every((e) => [e.actorId, e.targetId].includes(alice.id))).toBe(true);
    const future = new Date(server.clock.now().getTime() + DAY).toISOString();
    expect((await exportEvents({ since: future })).lines).toEqual([]);
    expect((await exportEvents({ until: future })).lines.length).toBe(ids.length);
    // a cursor past the end: nothing (yet)
    expect((await exportEvents({ cursor: ids.at(-1)! })).lines).toEqual([]);
    // the same page over tRPC: events and the next cursor
    const page = await get(`${server.url}/api/trpc/admin.exportAuditEvents?input=${encodeURIComponent(JSON.stringify({ limit: 2 }))}`, { bearer: admin.token });
    expect(page.status, page.text).toBe(200);
    expect(page.body.result.data.events.map((e: { id: string }) => e.id)).toEqual(ids.slice(0, 2));
    expect(page.body.result.data.nextCursor).toBe(ids[1]);
  });

  it("the export is the audit admins': 401 without a session, 403 for a user, 400 for a bad cursor or date", async () => {
    const anonymous = await fetch(`${server.auth}/admin/export-audit-events`);
    expect(anonymous.status).toBe(401);
    const user = await exportEvents({}, alice.token);
    expect(user.res.status).toBe(403);
    expect(JSON.parse(user.text).code).toBe("YOU_ARE_NOT_ALLOWED_TO_LIST_AUDIT_EVENTS");
    expectError(await adminGet(server, "export-audit-events", { cursor: "'; drop table audit_events; --" }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminGet(server, "export-audit-events", { since: "yesterday" }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminGet(server, "export-audit-events", { limit: "0" }, admin.token), 400, "VALIDATION_ERROR");
  });

  it("a reader that leaves mid-stream ends the export; the service goes on serving", async () => {
    const controller = new AbortController();
    const res = await fetch(`${server.auth}/admin/export-audit-events?limit=1`, { headers: { authorization: `Bearer ${admin.token}` }, signal: controller.signal });
    const reader = res.body!.getReader();
    await reader.read();
    controller.abort();
    await reader.read().catch(() => undefined);
    expect((await get(`${server.auth}/ok`)).status).toBe(200);
  });

  it("the sweeper prunes sign-in events past the retention, in batches", async () => {
    const before = await server.portcullis.app.orm.em.fork().count(AuditEvent, {});
    expect(before).toBeGreaterThan(4);
    server.clock.advance(31 * DAY);
    const signedIn = await post(`${server.auth}/sign-in/email`, { email: alice.email, password: PASSWORD }, { headers: from });
    expect(signedIn.status).toBe(200);
    const swept = await server.portcullis.sweeper.sweepOnce();
    // batches of 2 (sweeper.batchSize): every old event gone, the new sign-in kept
    expect(swept.auditEvents).toBe(before);
    const left = await eventsOf({});
    expect(left.map((e) => e.action)).toEqual(["sign-in"]);
  });

  it("passwordless: a link or a code records its own sign-in (magic-link-sign-in, email-otp-sign-in); a dead link or a wrong code a sign-in-failed with its reason; the confirm page nothing", async () => {
    const mails: Array<{ kind: string; to: string; url?: string | undefined; code?: string | undefined }> = [];
    const s = await startTestServer({ trustProxy: true, email: { send: (m) => void mails.push({ kind: m.kind, to: m.to, url: m.url, code: m.code }) } });
    const ip = "198.51.100.77";
    const here = { "x-forwarded-for": ip, "user-agent": UA };
    const mailOf = async (to: string, kind: string) => {
      await s.portcullis.app.mailer.settle();
      return mails.filter((m) => m.to === to && m.kind === kind).at(-1)!;
    };
    try {
      const email = uniqueEmail("audit-pl");
      expect((await post(`${s.auth}/sign-in/magic-link`, { email }, { headers: here })).status).toBe(200);
      const link = `${s.auth}/magic-link/verify?token=${new URL((await mailOf(email, "magicLink")).url!).searchParams.get("token")}`;
      expect((await get(link, { headers: { ...here, accept: "text/html" } })).status).toBe(200); // the confirm page
      const signedIn = await get(link, { headers: here });
      expect(signedIn.status, signedIn.text).toBe(200);
      expect((await get(link, { headers: here })).status).toBe(400);
      expect((await get(`${link}&callbackURL=%2Fin`, { headers: here })).status).toBe(302);

      expect((await post(`${s.auth}/email-otp/send-verification-otp`, { email, type: "sign-in" }, { headers: here })).status).toBe(200);
      const code = (await mailOf(email, "emailOtp")).code!;
      expect((await post(`${s.auth}/sign-in/email-otp`, { email, otp: code === "000000" ? "111111" : "000000" }, { headers: here })).status).toBe(400);
      expect((await post(`${s.auth}/sign-in/email-otp`, { email, otp: code }, { headers: here })).status).toBe(200);

      const rows = await s.portcullis.app.orm.em.fork().find(AuditEvent, { ip }, { orderBy: { id: "asc" } });
      const userId = signedIn.body.user.id;
      expect(rows.map((e) => [e.action, e.targetId, JSON.parse(e.metadata!)])).toEqual([
        ["magic-link-sign-in", userId, { newUser: true }],
        ["sign-in-failed", null, { method: "magic-link", reason: "INVALID_TOKEN" }],
        ["sign-in-failed", null, { method: "magic-link", reason: "INVALID_TOKEN" }],
        ["sign-in-failed", null, { method: "email-otp", reason: "INVALID_OTP" }],
        ["email-otp-sign-in", userId, { newUser: false, unprovenAccessRemoved: false }],
      ]);
      expect(rows.every((e) => e.userAgent === UA)).toBe(true);
    } finally {
      await s.close();
    }
  });
});
