import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

describe("smoke", () => {
  it("signs up, reads the session, signs out", async () => {
    const up = await post(`${server.auth}/sign-up/email`, { name: "A", email: uniqueEmail(), password: "password123" });
    expect(up.status).toBe(200);
    const token = up.body.token as string;
    const s = await get(`${server.auth}/get-session`, { bearer: token });
    expect(s.status).toBe(200);
    expect(s.body.user.id).toBe(up.body.user.id);
    const out = await post(`${server.auth}/sign-out`, undefined, { bearer: token });
    expect(out.body).toEqual({ success: true });
    const after = await get(`${server.auth}/get-session`, { bearer: token });
    expect(after.body).toBeNull();
  });
});
