import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signUp } from "../../harness/admin-helpers.ts";

/**
 * POST /verify-password for step-up checks (rate-limited like
 * sign-in), and update-user with no field.
 */

let server: TestServer;
let limited: TestServer;

beforeAll(async () => {
  server = await startTestServer();
  limited = await startTestServer({ rateLimit: { enabled: true } });
});
afterAll(async () => {
  await server?.close();
  await limited?.close();
});

describe(`verify-password (${testDialect})`, () => {
  it("200 {status:true} for the right password, 400 INVALID_PASSWORD for a wrong one, 401 without a session", async () => {
    const user = await signUp(server);
    const ok = await post(`${server.auth}/verify-password`, { password: PASSWORD }, { bearer: user.token });
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body).toEqual({ status: true });
    expectError(await post(`${server.auth}/verify-password`, { password: "wrong password" }, { bearer: user.token }), 400, "INVALID_PASSWORD");
    expectError(await post(`${server.auth}/verify-password`, { password: PASSWORD }), 401, "UNAUTHORIZED");
    expectError(await post(`${server.auth}/verify-password`, {}, { bearer: user.token }), 400, "VALIDATION_ERROR");
  });

  it("tRPC verifyPassword answers the same", async () => {
    const user = await signUp(server);
    const ok = await post(`${server.url}/api/trpc/verifyPassword`, { password: PASSWORD }, { bearer: user.token });
    expect(ok.body.result.data).toEqual({ status: true });
    const bad = await post(`${server.url}/api/trpc/verifyPassword`, { password: "nope nope" }, { bearer: user.token });
    expect(bad.status).toBe(400);
    expect(bad.body.error.data.authCode).toBe("INVALID_PASSWORD");
  });

  it("a user without a password gets 400 INVALID_PASSWORD", async () => {
    const admin = await bootstrapAdmin(server);
    const created = await adminPost(server, "create-user", { email: uniqueEmail("nopw"), name: "No Password" }, admin.token);
    const imp = await adminPost(server, "impersonate-user", { userId: created.body.user.id }, admin.token);
    expectError(await post(`${server.auth}/verify-password`, { password: PASSWORD }, { bearer: imp.headers.get("set-auth-token")! }), 400, "INVALID_PASSWORD");
  });

  it("is rate-limited like sign-in: the 4th try within 10 s is 429, whatever the spelling", async () => {
    const user = await signUp(limited);
    for (let i = 0; i < 3; i++) {
      expect((await post(`${limited.auth}/verify-password`, { password: `guess ${i} guess` }, { bearer: user.token })).status).toBe(400);
    }
    const blocked = await post(`${limited.url}/api/trpc/verifyPassword`, { password: PASSWORD }, { bearer: user.token });
    expect(blocked.status).toBe(429);
    expectError(await post(`${limited.auth}//verify-password/`, { password: PASSWORD }, { bearer: user.token }), 429, "RATE_LIMITED");
  });
});

describe(`update-user with no field (${testDialect})`, () => {
  it("400 NO_FIELDS_TO_UPDATE over REST and tRPC; the user is unchanged", async () => {
    const user = await signUp(server);
    expectError(await post(`${server.auth}/update-user`, {}, { bearer: user.token }), 400, "NO_FIELDS_TO_UPDATE");
    const viaTrpc = await post(`${server.url}/api/trpc/updateUser`, {}, { bearer: user.token });
    expect(viaTrpc.status).toBe(400);
    expect(viaTrpc.body.error.data.authCode).toBe("NO_FIELDS_TO_UPDATE");
    expect((await post(`${server.auth}/update-user`, { name: "Renamed" }, { bearer: user.token })).body).toEqual({ status: true });
  });
});
