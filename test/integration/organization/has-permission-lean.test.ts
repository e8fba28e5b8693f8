import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leanHasPermission } from "../../../rest-bridge/lean.ts";
import { adminPost, bootstrapAdmin, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";
import { post, request, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * POST /organization/has-permission's lean path (rest-bridge/lean.ts) answers exactly
 * as the procedure does: status, body and headers, for every kind of caller and body. The
 * procedure's answer is the same request with one key the schema ignores (`via`): a body with a
 * key the lean path does not read always takes the procedure.
 */
let server: TestServer;
let admin: SignedInUser;
beforeAll(async () => {
  server = await startTestServer({
    organization: { roles: { billing: { organization: ["update"] }, auditor: { member: [], invitation: [] } }, dynamicAccessControl: { enabled: true } },
  });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

type Caller = { bearer?: string; cookie?: string; headers?: Record<string, string> };
const url = () => `${server.auth}/organization/has-permission`;
/** Headers that legitimately differ per request. */
const VARYING = new Set(["date", "x-request-id", "content-length", "keep-alive", "connection"]);
const stable = (r: Reply) => ({ status: r.status, body: r.body, headers: [...r.headers].filter(([k]) => !VARYING.has(k)) });

/** The lean path is taken for this body (a promise), and its HTTP answer equals the procedure's. */
async function same(body: unknown, caller: Caller, raw?: string) {
  if (body !== null && typeof body === "object") {
    const headers = { ...(caller.bearer ? { authorization: `Bearer ${caller.bearer}` } : {}), ...(caller.cookie ? { cookie: caller.cookie } : {}), ...caller.headers };
    const pending = leanHasPermission(server.portcullis.app, { headers, effects: { headers: {} } }, body);
    expect(pending, "the lean path is taken").toBeInstanceOf(Promise);
    await pending?.catch(() => undefined);
  }
  const lean = raw === undefined ? await post(url(), body, caller) : await request("POST", url(), { ...caller, raw, headers: { "content-type": "application/json", ...caller.headers } });
  const viaProcedure = raw === undefined ? await post(url(), { ...(body as object), via: "procedure" }, caller) : lean;
  expect(stable(lean)).toEqual(stable(viaProcedure));
  return lean;
}

let n = 0;
async function orgWithOwner() {
  const owner = await signUp(server);
  const res = await post(`${server.auth}/organization/create`, { name: "Lean", slug: `lean-${Date.now().toString(36)}-${n++}` }, { bearer: owner.token });
  expect(res.status, res.text).toBe(200);
  return { owner, orgId: res.body.id as string };
}
async function join(orgId: string, role: string) {
  const u = await signUp(server);
  const res = await post(`${server.auth}/organization/add-member`, { userId: u.id, organizationId: orgId, role }, { bearer: admin.token });
  expect(res.status, res.text).toBe(200);
  return u;
}

describe("has-permission's lean path answers as the procedure", () => {
  it("owner, admin, member (better-auth's defaults), custom and multiple roles, the active organization or a given one", async () => {
    const { owner, orgId } = await orgWithOwner();
    const a = await join(orgId, "admin");
    const m = await join(orgId, "member");
    const billing = await join(orgId, "billing,member");
    const cases: [SignedInUser, Record<string, string[]>, boolean][] = [
      [owner, { organization: ["delete"] }, true],
      [owner, { member: ["create", "delete"], invitation: ["cancel"] }, true],
      [a, { member: ["create"] }, true],
      [a, { organization: ["delete"] }, false],
      [m, { member: ["create"] }, false],
      [m, { organization: ["update"] }, false],
      [billing, { organization: ["update"] }, true],
      [billing, { organization: ["update"], member: ["delete"] }, false],
      [owner, { unknown: ["x"] }, false],
    ];
    for (const [u, permissions, expected] of cases) {
      const given = await same({ organizationId: orgId, permissions }, { bearer: u.token });
      expect(given.status, given.text).toBe(200);
      expect(given.body).toEqual({ error: null, success: expected });
      // The deprecated `permission` spelling answers alike.
      expect((await same({ organizationId: orgId, permission: permissions }, { bearer: u.token })).body.success).toBe(expected);
    }
    // The owner's session has the organization active (create): no organizationId needed.
    expect((await same({ permissions: { organization: ["delete"] } }, { bearer: owner.token })).body).toEqual({ error: null, success: true });
  });

  it("dynamic roles: granted as created, changed at run time", async () => {
    const { owner, orgId } = await orgWithOwner();
    const created = await post(`${server.auth}/organization/create-role`, { role: "support", permission: { invitation: ["create"] } }, { bearer: owner.token });
    expect(created.status, created.text).toBe(200);
    const s = await join(orgId, "support");
    expect((await same({ organizationId: orgId, permissions: { invitation: ["create"] } }, { bearer: s.token })).body.success).toBe(true);
    expect((await same({ organizationId: orgId, permissions: { member: ["delete"] } }, { bearer: s.token })).body.success).toBe(false);
    const updated = await post(`${server.auth}/organization/update-role`, { roleName: "support", data: { permission: { member: ["delete"] } } }, { bearer: owner.token });
    expect(updated.status, updated.text).toBe(200);
    expect((await same({ organizationId: orgId, permissions: { member: ["delete"] } }, { bearer: s.token })).body.success).toBe(true);
    expect((await same({ organizationId: orgId, permissions: { invitation: ["create"] } }, { bearer: s.token })).body.success).toBe(false);
  });

  it("no active organization, an unknown organization, not a member: the procedure's 400 and 403", async () => {
    const { orgId } = await orgWithOwner();
    const stranger = await signUp(server);
    const none = await same({ permissions: { member: ["create"] } }, { bearer: stranger.token });
    expect([none.status, none.body.code]).toEqual([400, "NO_ACTIVE_ORGANIZATION"]);
    const unknown = await same({ organizationId: crypto.randomUUID(), permissions: { member: ["create"] } }, { bearer: stranger.token });
    expect(unknown.status, unknown.text).toBe(403);
    const notAnId = await same({ organizationId: "x", permissions: { member: ["create"] } }, { bearer: stranger.token });
    expect(notAnId.body).toEqual(unknown.body);
    const outsider = await same({ organizationId: orgId, permissions: { member: ["create"] } }, { bearer: stranger.token });
    expect(outsider.status, outsider.text).toBe(403);
    expect(outsider.body).toEqual(unknown.body);
  });

  it("no session: 401; a dead token: 401", async () => {
    const { orgId } = await orgWithOwner();
    const body = { organizationId: orgId, permissions: { member: ["create"] } };
    const anonymous = await same(body, {});
    expect([anonymous.status, anonymous.body.code]).toEqual([401, "UNAUTHORIZED"]);
    const dead = await same(body, { bearer: "not-a-session-token" });
    expect([dead.status, dead.body.code]).toEqual([401, "UNAUTHORIZED"]);
  });

  it("bad bodies: the procedure's 400 JSON (they take the procedure); a callback field is checked as everywhere", async () => {
    const { owner, orgId } = await orgWithOwner();
    const caller = { bearer: owner.token };
    for (const raw of ['{"organizationId":123,"permissions":{"member":["create"]}}', `{"organizationId":"${orgId}"}`, `{"organizationId":"${orgId}","permissions":{"member":"create"}}`, "[1]", "{", "null"]) {
      const r = await same(undefined, caller, raw);
      expect(r.status, raw).toBe(400);
      expect(r.headers.get("content-type"), raw).toMatch(/^application\/json/);
      expect(typeof r.body.code, r.text).toBe("string");
      expect(typeof r.body.message, r.text).toBe("string");
    }
    // Both permissions and permission: the schema's refusal, on both paths.
    const both = await post(url(), { organizationId: orgId, permissions: { member: ["create"] }, permission: { member: ["create"] } }, caller);
    expect(both.status, both.text).toBe(400);
    const leanReq = { headers: { authorization: `Bearer ${owner.token}` }, effects: { headers: {} } };
    expect(leanHasPermission(server.portcullis.app, leanReq, { permissions: {}, permission: {} })).toBeUndefined();
    // A callback field: never on the lean path; the builder's check refuses a foreign one.
    expect(leanHasPermission(server.portcullis.app, leanReq, { permissions: { member: ["create"] }, callbackURL: "https://evil.example/" })).toBeUndefined();
    const evil = await post(url(), { organizationId: orgId, permissions: { member: ["create"] }, callbackURL: "https://evil.example/" }, caller);
    expect([evil.status, evil.body.code]).toEqual([403, "INVALID_CALLBACK_URL"]);
    // Not JSON: 415 before any path is chosen.
    const form = await request("POST", url(), { bearer: owner.token, raw: "a=1", headers: { "content-type": "application/x-www-form-urlencoded" } });
    expect(form.status).toBe(415);
  });

  it("an API key's principal and a cookie session answer as the procedure; a cookie from a foreign origin is refused", async () => {
    const { owner, orgId } = await orgWithOwner();
    const key = await post(`${server.auth}/api-key/create`, {}, { bearer: owner.token });
    expect(key.status, key.text).toBe(200);
    const byKey = await same({ organizationId: orgId, permissions: { organization: ["delete"] } }, { headers: { "x-api-key": key.body.key } });
    expect(byKey.body).toEqual({ error: null, success: true });
    const badKey = await same({ organizationId: orgId, permissions: { organization: ["delete"] } }, { headers: { "x-api-key": "pc_not-a-key" } });
    expect(badKey.status, badKey.text).toBe(401);
    const byCookie = await same({ permissions: { organization: ["delete"] } }, { cookie: owner.cookie });
    expect(byCookie.body).toEqual({ error: null, success: true });
    const foreign = await request("POST", url(), { cookie: owner.cookie, raw: JSON.stringify({ permissions: { organization: ["delete"] } }), headers: { "content-type": "application/json", origin: "https://evil.example" } });
    expect(foreign.status).toBe(403);
    const banned = await adminPost(server, "ban-user", { userId: owner.id }, admin.token);
    expect(banned.status, banned.text).toBe(200);
    const afterBan = await same({ organizationId: orgId, permissions: { organization: ["delete"] } }, { bearer: owner.token });
    expect(afterBan.status, afterBan.text).toBe(401);
  });

  it("a cookie session whose expiry slides gets its cookie re-sent, on a grant and on a refusal, as the procedure sends it", async () => {
    const { owner, orgId } = await orgWithOwner();
    const body = { organizationId: orgId, permissions: { organization: ["delete"] } };
    const answers = [];
    for (const via of [undefined, "procedure"]) {
      // Past session.updateAgeSec (a day) since the last slide: this check moves the expiry.
      server.clock.advance(25 * 3600 * 1000);
      const pending = via ? undefined : leanHasPermission(server.portcullis.app, { headers: { cookie: owner.cookie }, effects: { headers: {} } }, body);
      if (pending) {
        // The lean call itself slid it: one more day for the request below.
        await pending;
        server.clock.advance(25 * 3600 * 1000);
      }
      const granted = await post(url(), { ...body, ...(via ? { via } : {}) }, { cookie: owner.cookie });
      const refused = await (async () => {
        server.clock.advance(25 * 3600 * 1000);
        return post(url(), { organizationId: crypto.randomUUID(), permissions: body.permissions, ...(via ? { via } : {}) }, { cookie: owner.cookie });
      })();
      answers.push({ granted, refused });
    }
    for (const { granted, refused } of answers) {
      expect([granted.status, granted.body]).toEqual([200, { error: null, success: true }]);
      expect(granted.headers.get("set-cookie"), "granted").toMatch(/session_token=.*Max-Age=604800/);
      expect(refused.status, refused.text).toBe(403);
      expect(refused.headers.get("set-cookie"), "refused").toMatch(/session_token=.*Max-Age=604800/);
    }
  });

  it("its exact target and other spellings of the path (a query, a doubled slash) give one answer; a body sent in pieces too", async () => {
    const { owner, orgId } = await orgWithOwner();
    const body = JSON.stringify({ organizationId: orgId, permissions: { organization: ["delete"] } });
    const headers = { "content-type": "application/json" };
    const exact = await request("POST", url(), { bearer: owner.token, raw: body, headers });
    expect(exact.body).toEqual({ error: null, success: true });
    for (const target of [`${url()}?x=1`, `${server.url}/api/auth//organization/has-permission`]) {
      expect(stable(await request("POST", target, { bearer: owner.token, raw: body, headers })), target).toEqual(stable(exact));
    }
    // The body arrives after the headers, in two writes: the bridge waits for it (no fast read of a partial body).
    const { request: httpRequest } = await import("node:http");
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(url(), { method: "POST", headers: { ...headers, authorization: `Bearer ${owner.token}`, "content-length": String(Buffer.byteLength(body)) } }, (res) => {
        let text = "";
        res.on("data", (c: Buffer) => (text += c.toString()));
        res.on("end", () => resolve({ status: res.statusCode!, text }));
      });
      req.on("error", reject);
      req.flushHeaders();
      req.write(body.slice(0, 10));
      setTimeout(() => req.end(body.slice(10)), 50);
    });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.parse(answer.text)).toEqual({ error: null, success: true });
  });
});
