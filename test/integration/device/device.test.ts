import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECOND } from "../../harness/clock.ts";
import { cookieFrom, get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/** A simulated device: plain HTTP, form-encoded as RFC 8628 §3.1 and §3.4 require. */
const GRANT = "urn:ietf:params:oauth:grant-type:device_code";
const USER_CODE = /^[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{4}-[ABCDEFGHJKLMNPQRSTUVWXYZ23456789]{4}$/;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

function form(url: string, params: Record<string, string>): Promise<Reply> {
  return request("POST", url, {
    raw: new URLSearchParams(params).toString(),
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
}

async function deviceCode(clientId = "tv-app", scope?: string) {
  const res = await form(`${server.auth}/device/code`, { client_id: clientId, ...(scope ? { scope } : {}) });
  expect(res.status).toBe(200);
  return res.body as { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };
}

const poll = (code: string, clientId = "tv-app") =>
  form(`${server.auth}/device/token`, { grant_type: GRANT, device_code: code, client_id: clientId });

function expectOAuthError(res: Reply, error: string) {
  expect(res.status).toBe(400);
  expect(Object.keys(res.body).sort()).toEqual(["error", "error_description"]);
  expect(res.body.error).toBe(error);
  expect(typeof res.body.error_description).toBe("string");
  expect(res.headers.get("cache-control")).toBe("no-store");
}

/**
 * approve and deny refuse in the RFC 6749 §5.2 shape too, with the names and statuses of
 * better-auth's device plugin (the description is our table's message).
 */
function expectDecisionError(res: Reply, status: number, error: string, description: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toEqual({ error, error_description: description });
}

async function signUp() {
  const res = await post(`${server.auth}/sign-up/email`, { name: "Viewer", email: uniqueEmail("device"), password: "password123" });
  expect(res.status).toBe(200);
  return { id: res.body.user.id as string, cookie: cookieFrom(res.headers)!, token: res.body.token as string };
}

const claim = (userCode: string, cookie?: string) =>
  get(`${server.auth}/device?user_code=${encodeURIComponent(userCode)}`, cookie ? { cookie } : {});
const approve = (userCode: string, cookie?: string) => post(`${server.auth}/device/approve`, { userCode }, cookie ? { cookie } : {});
const deny = (userCode: string, cookie?: string) => post(`${server.auth}/device/deny`, { userCode }, cookie ? { cookie } : {});

describe("device authorization grant (RFC 8628)", () => {
  it("runs the whole flow: code, pending, slow_down, approve, token once, Bearer, then invalid_grant", async () => {
    const code = await deviceCode("tv-app", "openid profile");
    expect(code.user_code).toMatch(USER_CODE);
    expect(code.device_code.length).toBeGreaterThanOrEqual(43); // 32 random bytes, base64url
    expect(code.verification_uri).toBe("http://127.0.0.1:3000/device");
    expect(code.verification_uri_complete).toBe(`http://127.0.0.1:3000/device?user_code=${code.user_code}`);
    expect(code.expires_in).toBe(1800);
    expect(code.interval).toBe(5);

    // Stored hashed: the raw device code is nowhere in the table.
    const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select * from device_codes");
    expect(JSON.stringify(rows)).not.toContain(code.device_code);
    expect(rows.map((r: { device_code_hash: string }) => r.device_code_hash)).toContain(
      createHash("sha256").update(code.device_code).digest("hex"),
    );

    expectOAuthError(await poll(code.device_code), "authorization_pending");
    server.clock.advance(5 * SECOND);
    expectOAuthError(await poll(code.device_code), "authorization_pending");
    server.clock.advance(2 * SECOND);
    expectOAuthError(await poll(code.device_code), "slow_down"); // interval is now 10 s
    server.clock.advance(5 * SECOND);
    expectOAuthError(await poll(code.device_code), "slow_down"); // 5 s < 10 s; interval now 15 s
    server.clock.advance(15 * SECOND);
    expectOAuthError(await poll(code.device_code), "authorization_pending");

    const user = await signUp();
    const seen = await claim(code.user_code, user.cookie);
    expect(seen.status).toBe(200);
    expect(seen.body).toEqual({ user_code: code.user_code, status: "pending" });
    const ok = await approve(code.user_code, user.cookie);
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ success: true });
    expect((await claim(code.user_code, user.cookie)).body).toEqual({ user_code: code.user_code, status: "approved" });

    server.clock.advance(15 * SECOND);
    const token = await poll(code.device_code);
    expect(token.status).toBe(200);
    expect(token.body).toEqual({ access_token: expect.any(String), token_type: "Bearer", expires_in: 7 * 24 * 3600, scope: "openid profile" });
    expect(token.headers.get("cache-control")).toBe("no-store");
    expect(token.headers.get("pragma")).toBe("no-cache");
    expect(token.headers.get("set-cookie")).toBeNull();

    const session = await get(`${server.auth}/get-session`, { bearer: token.body.access_token });
    expect(session.status).toBe(200);
    expect(session.body.user.id).toBe(user.id);

    server.clock.advance(15 * SECOND);
    expectOAuthError(await poll(code.device_code), "invalid_grant");
  });

  it("accepts JSON bodies too", async () => {
    const res = await post(`${server.auth}/device/code`, { client_id: "json-cli" });
    expect(res.status).toBe(200);
    const poll = await post(`${server.auth}/device/token`, { grant_type: GRANT, device_code: res.body.device_code, client_id: "json-cli" });
    expectOAuthError(poll, "authorization_pending");
  });

  it("the deny path ends in access_denied, and the code cannot be approved afterwards", async () => {
    const code = await deviceCode();
    const user = await signUp();
    expect((await claim(code.user_code, user.cookie)).status).toBe(200);
    const denied = await deny(code.user_code, user.cookie);
    expect(denied.status).toBe(200);
    expect(denied.body).toEqual({ success: true });
    expectOAuthError(await poll(code.device_code), "access_denied");
    server.clock.advance(5 * SECOND);
    expectOAuthError(await poll(code.device_code), "access_denied");
    expectDecisionError(await approve(code.user_code, user.cookie), 400, "invalid_request", "Device code already processed");
  });

  it("expires after expires_in: expired_token for the device, EXPIRED_USER_CODE for people", async () => {
    const code = await deviceCode();
    const user = await signUp();
    expect((await claim(code.user_code, user.cookie)).status).toBe(200);
    server.clock.advance(1800 * SECOND);
    expectOAuthError(await poll(code.device_code), "expired_token");
    const seen = await claim(code.user_code, user.cookie);
    expect(seen.status).toBe(400);
    expect(seen.body.code).toBe("EXPIRED_USER_CODE");
    expectDecisionError(await approve(code.user_code, user.cookie), 400, "expired_token", "User code has expired");
  });

  it("a client_id that does not match the code gets invalid_grant; unknown codes too", async () => {
    const code = await deviceCode("tv-app");
    expectOAuthError(await poll(code.device_code, "other-app"), "invalid_grant");
    expectOAuthError(await poll(code.device_code, "tv-app"), "authorization_pending");
    expectOAuthError(await poll("not-a-device-code"), "invalid_grant");
  });

  it("accepts the user code with or without the dash, in any case", async () => {
    const code = await deviceCode();
    const user = await signUp();
    const plain = code.user_code.replace("-", "");
    for (const variant of [plain.toLowerCase(), code.user_code.toLowerCase(), ` ${plain} `, `${plain.slice(0, 4).toLowerCase()}-${plain.slice(4)}`]) {
      const seen = await claim(variant, user.cookie);
      expect(seen.status).toBe(200);
      expect(seen.body).toEqual({ user_code: code.user_code, status: "pending" });
    }
    expect((await approve(plain.toLowerCase(), user.cookie)).body).toEqual({ success: true });
    const token = await poll(code.device_code);
    expect(token.status).toBe(200);
  });

  it("approve and deny need the signed-in claimer", async () => {
    const code = await deviceCode();
    const owner = await signUp();
    const other = await signUp();

    expectDecisionError(await approve(code.user_code), 401, "unauthorized", "Unauthorized");

    const notClaimed = "Device code has not been claimed: open GET /device with the user_code while signed in first";
    expectDecisionError(await approve(code.user_code, owner.cookie), 400, "invalid_request", notClaimed);

    // A signed-out look does not claim; the first signed-in look does, and a second user cannot take it over.
    expect((await claim(code.user_code)).body).toEqual({ user_code: code.user_code, status: "pending" });
    expect((await claim(code.user_code, owner.cookie)).status).toBe(200);
    expect((await claim(code.user_code, other.cookie)).status).toBe(200);
    for (const act of [approve, deny]) {
      expectDecisionError(await act(code.user_code, other.cookie), 403, "access_denied", "This code was claimed by another user");
    }
    expectOAuthError(await poll(code.device_code), "authorization_pending");

    expect((await approve(code.user_code, owner.cookie)).status).toBe(200);
    expectDecisionError(await approve(code.user_code, owner.cookie), 400, "invalid_request", "Device code already processed");

    for (const bad of ["ZZZZ-ZZZZ", "ABC", "IIII-OOOO"]) {
      const res = await claim(bad, owner.cookie);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe("INVALID_USER_CODE");
      expectDecisionError(await approve(bad, owner.cookie), 400, "invalid_request", "Invalid user code");
    }
  });

  it("issues the token exactly once under concurrent polls", async () => {
    const code = await deviceCode();
    const user = await signUp();
    await claim(code.user_code, user.cookie);
    expect((await approve(code.user_code, user.cookie)).status).toBe(200);
    const replies = await Promise.all(Array.from({ length: 6 }, () => poll(code.device_code)));
    expect(replies.filter((r) => r.status === 200)).toHaveLength(1);
    for (const r of replies.filter((r) => r.status !== 200)) expectOAuthError(r, "invalid_grant");
  });

  it("a user banned after approving gets no session: access_denied", async () => {
    const code = await deviceCode();
    const user = await signUp();
    await claim(code.user_code, user.cookie);
    expect((await approve(code.user_code, user.cookie)).status).toBe(200);
    const conn = server.portcullis.app.orm.em.fork().getConnection();
    await conn.execute("update users set banned = ? where id = ?", [true, user.id]);
    const count = async () => Number((await conn.execute("select count(*) as n from sessions where user_id = ?", [user.id]))[0].n);
    const before = await count();
    expectOAuthError(await poll(code.device_code), "access_denied");
    server.clock.advance(5 * SECOND);
    expectOAuthError(await poll(code.device_code), "access_denied");
    expect(await count()).toBe(before);
  });

  it("answers invalid_request and unsupported_grant_type for malformed token requests", async () => {
    expectOAuthError(await form(`${server.auth}/device/code`, {}), "invalid_request");
    const code = await deviceCode();
    expectOAuthError(await form(`${server.auth}/device/token`, { device_code: code.device_code, client_id: "tv-app" }), "invalid_request");
    expectOAuthError(await form(`${server.auth}/device/token`, { grant_type: "password", device_code: code.device_code, client_id: "tv-app" }), "unsupported_grant_type");
    expectOAuthError(await form(`${server.auth}/device/token`, { grant_type: GRANT, client_id: "tv-app" }), "invalid_request");
    expectOAuthError(await post(`${server.auth}/device/token`, { grant_type: GRANT, device_code: 42, client_id: "tv-app" }), "invalid_request");
  });

  it("tRPC callers get a typed error with data.authCode", async () => {
    const code = await deviceCode();
    const res = await post(`${server.url}/api/trpc/device.token`, { grant_type: GRANT, device_code: code.device_code, client_id: "tv-app" });
    expect(res.status).toBe(400);
    expect(res.body.error.data.authCode).toBe("AUTHORIZATION_PENDING");
    const caller = server.portcullis.createCaller();
    await expect(caller.device.token({ grant_type: GRANT, device_code: "nope", client_id: "tv-app" })).rejects.toMatchObject({ authCode: "INVALID_GRANT" });
  });

  it("serves the verification page with a strict CSP", async () => {
    const page = await get(`${server.url}/device?user_code=%3Cscript%3E`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    const csp = page.headers.get("content-security-policy")!;
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)![1]!;
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(page.text).toContain(`<script nonce="${nonce}">`);
    expect(page.text).not.toContain("<script>");
    expect(page.headers.get("x-frame-options")).toBe("DENY");
    expect(page.headers.get("cache-control")).toBe("no-store");
  });
});

describe("device authorization config", () => {
  let custom: TestServer;
  beforeAll(async () => {
    custom = await startTestServer({
      deviceAuthorization: {
        expiresInSec: 600,
        intervalSec: 2,
        verificationUri: "https://tv.example.test/link",
        validateClient: async (clientId) => clientId === "known-tv",
      },
      session: { cacheTtlMs: 60_000 },
    });
  });
  afterAll(async () => {
    await custom.close();
  });

  it("validateClient answers invalid_client; lifetimes and verification_uri follow the config", async () => {
    const bad = await post(`${custom.auth}/device/code`, { client_id: "unknown-tv" });
    expectOAuthError(bad, "invalid_client");
    const res = await post(`${custom.auth}/device/code`, { client_id: "known-tv" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ expires_in: 600, interval: 2, verification_uri: "https://tv.example.test/link" });
    expect(res.body.verification_uri_complete).toBe(`https://tv.example.test/link?user_code=${res.body.user_code}`);
    const poll = await post(`${custom.auth}/device/token`, { grant_type: GRANT, device_code: res.body.device_code, client_id: "unknown-tv" });
    expectOAuthError(poll, "invalid_client");
  });

  it("a banned user cannot approve, even while another instance's ban has not reached this one's session cache", async () => {
    const code = await post(`${custom.auth}/device/code`, { client_id: "known-tv" });
    const up = await post(`${custom.auth}/sign-up/email`, { name: "B", email: uniqueEmail("banned"), password: "password123" });
    const cookie = cookieFrom(up.headers)!;
    expect((await get(`${custom.auth}/device?user_code=${code.body.user_code}`, { cookie })).status).toBe(200);
    await custom.portcullis.app.orm.em.fork().getConnection().execute("update users set banned = ? where id = ?", [true, up.body.user.id]);
    const res = await post(`${custom.auth}/device/approve`, { userCode: code.body.user_code }, { cookie });
    expectDecisionError(res, 403, "access_denied", "You have been banned from this application");
  });
});
