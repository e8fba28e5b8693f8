import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, TEST_ORIGIN, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/** Small differences from better-auth 1.6 found by the compatibility review, each through REST and tRPC. */
let server: TestServer;
let trpc: string;
let admin: SignedInUser;
let plain: SignedInUser;
beforeAll(async () => {
  server = await startTestServer();
  trpc = `${server.url}/api/trpc`;
  admin = await bootstrapAdmin(server);
  plain = await signUp(server);
});
afterAll(async () => {
  await server.close();
});

function expectTrpcError(res: Reply, status: number, authCode: string, message: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body.error.message).toBe(message);
  expect(res.body.error.data).toMatchObject({ authCode, httpStatus: status });
}

describe(`an invalid email: sign-up and sign-in answer alike (${testDialect})`, () => {
  const origin = { origin: TEST_ORIGIN };
  const form = (path: string, fields: Record<string, string>) =>
    request("POST", `${server.auth}${path}`, {
      raw: new URLSearchParams(fields).toString(),
      headers: { ...origin, "content-type": "application/x-www-form-urlencoded" },
    });

  for (const email of ["not-an-email", "a@", "@example.test", "two@@example.test", "a@b", "spaces in@example.test", " "]) {
    it(`400 INVALID_EMAIL "Invalid email" for ${JSON.stringify(email)}: JSON, form and tRPC`, async () => {
      const fields = { name: "N", email, password: PASSWORD };
      for (const [path, procedure] of [["/sign-up/email", "signUp.email"], ["/sign-in/email", "signIn.email"]] as const) {
        for (const res of [await post(`${server.auth}${path}`, fields, { headers: origin }), await form(path, fields)]) {
          expect(res.status, `${path}: ${res.text}`).toBe(400);
          expect(res.body).toEqual({ code: "INVALID_EMAIL", message: "Invalid email" });
        }
        expectTrpcError(await post(`${trpc}/${procedure}`, fields, { headers: origin }), 400, "INVALID_EMAIL", "Invalid email");
      }
    });
  }
});

describe(`admin session control for an unknown user, as better-auth answers (${testDialect})`, () => {
  const unknownIds = ["00000000-0000-4000-8000-000000000000", "not-a-uuid"];

  it("list-user-sessions: 200 { sessions: [] } over REST and tRPC", async () => {
    for (const userId of unknownIds) {
      const res = await adminPost(server, "list-user-sessions", { userId }, admin.token);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ sessions: [] });
      const viaTrpc = await post(`${trpc}/admin.listUserSessions`, { userId }, { bearer: admin.token });
      expect(viaTrpc.status, viaTrpc.text).toBe(200);
      expect(viaTrpc.body.result.data).toEqual({ sessions: [] });
    }
  });

  it("revoke-user-sessions: 200 { success: true } over REST and tRPC, each call audited", async () => {
    for (const userId of unknownIds) {
      const res = await adminPost(server, "revoke-user-sessions", { userId }, admin.token);
      expect(res.status, res.text).toBe(200);
      expect(res.body).toEqual({ success: true });
      const viaTrpc = await post(`${trpc}/admin.revokeUserSessions`, { userId }, { bearer: admin.token });
      expect(viaTrpc.status, viaTrpc.text).toBe(200);
      expect(viaTrpc.body.result.data).toEqual({ success: true });
      const events = (await adminGet(server, "list-audit-events", { limit: 2 }, admin.token)).body.events;
      for (const event of events) {
        expect(event).toMatchObject({ action: "revoke-user-sessions", actorId: admin.id, targetType: "user", targetId: userId, metadata: { revoked: 0 } });
      }
    }
  });

  it("still needs a session (401) and the permission (403), whatever the user", async () => {
    for (const userId of unknownIds) {
      expectError(await adminPost(server, "list-user-sessions", { userId }), 401, "UNAUTHORIZED");
      expectError(await adminPost(server, "revoke-user-sessions", { userId }), 401, "UNAUTHORIZED");
      expectError(await adminPost(server, "list-user-sessions", { userId }, plain.token), 403, "YOU_ARE_NOT_ALLOWED_TO_LIST_USERS_SESSIONS");
      expectError(await adminPost(server, "revoke-user-sessions", { userId }, plain.token), 403, "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS");
      expect((await post(`${trpc}/admin.revokeUserSessions`, { userId }, { bearer: plain.token })).body.error.data.authCode).toBe(
        "YOU_ARE_NOT_ALLOWED_TO_REVOKE_USERS_SESSIONS",
      );
    }
  });
});

describe(`device approve and deny refuse in the RFC 6749 shape (${testDialect})`, () => {
  const NOT_CLAIMED = "Device code has not been claimed: open GET /device with the user_code while signed in first";
  const decisions = ["approve", "deny"] as const;

  async function deviceCode(): Promise<string> {
    const res = await post(`${server.auth}/device/code`, { client_id: "tv-app" });
    expect(res.status, res.text).toBe(200);
    return res.body.user_code;
  }
  const claim = (userCode: string, who: SignedInUser) => get(`${server.auth}/device?user_code=${userCode}`, { bearer: who.token });
  const rest = (decision: string, userCode: unknown, who?: SignedInUser) =>
    post(`${server.auth}/device/${decision}`, { userCode }, who ? { bearer: who.token } : {});
  const viaTrpc = (decision: string, userCode: unknown, who?: SignedInUser) =>
    post(`${trpc}/device.${decision}`, { userCode }, who ? { bearer: who.token } : {});

  /** REST: `{ error, error_description }` only; tRPC: the same status with the precise contract code. */
  async function expectRefused(userCode: string, who: SignedInUser | undefined, status: number, error: string, authCode: string, description: string) {
    for (const decision of decisions) {
      const res = await rest(decision, userCode, who);
      expect(res.status, `${decision}: ${res.text}`).toBe(status);
      expect(res.body).toEqual({ error, error_description: description });
      expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expectTrpcError(await viaTrpc(decision, userCode, who), status, authCode, description);
    }
  }

  it("no session: 401 unauthorized", async () => {
    await expectRefused(await deviceCode(), undefined, 401, "unauthorized", "UNAUTHORIZED", "Unauthorized");
  });

  it("an unknown or malformed user code: 400 invalid_request", async () => {
    for (const bad of ["ZZZZ-ZZZZ", "ABC", "IIII-OOOO"]) {
      await expectRefused(bad, plain, 400, "invalid_request", "INVALID_USER_CODE", "Invalid user code");
    }
  });

  it("a code nobody claimed: 400 invalid_request", async () => {
    await expectRefused(await deviceCode(), plain, 400, "invalid_request", "DEVICE_CODE_NOT_CLAIMED", NOT_CLAIMED);
  });

  it("a code another user claimed: 403 access_denied", async () => {
    const userCode = await deviceCode();
    const other = await signUp(server);
    expect((await claim(userCode, other)).status).toBe(200);
    await expectRefused(userCode, plain, 403, "access_denied", "DEVICE_CODE_CLAIMED_BY_ANOTHER_USER", "This code was claimed by another user");
  });

  it("a code already approved or denied: 400 invalid_request", async () => {
    for (const first of decisions) {
      const userCode = await deviceCode();
      expect((await claim(userCode, plain)).status).toBe(200);
      expect((await rest(first, userCode, plain)).body).toEqual({ success: true });
      await expectRefused(userCode, plain, 400, "invalid_request", "DEVICE_CODE_ALREADY_PROCESSED", "Device code already processed");
    }
  });

  it("a missing userCode stays a VALIDATION_ERROR, as better-auth's own validation answers", async () => {
    for (const decision of decisions) {
      const res = await post(`${server.auth}/device/${decision}`, {}, { bearer: plain.token });
      expectError(res, 400, "VALIDATION_ERROR");
      expect(res.body.issues.map((i: { path: string }) => i.path)).toEqual(["userCode"]);
    }
  });

  // Last: it moves the server's clock past the codes' lifetime.
  it("an expired code: 400 expired_token", async () => {
    const userCode = await deviceCode();
    expect((await claim(userCode, plain)).status).toBe(200);
    server.clock.advance(1800 * SECOND);
    await expectRefused(userCode, plain, 400, "expired_token", "EXPIRED_USER_CODE", "User code has expired");
  });
});
