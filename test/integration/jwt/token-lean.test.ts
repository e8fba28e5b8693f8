/**
 * GET /token's lean path (rest-bridge/lean.ts): taken for every call when tracing is off, and
 * answering as the procedure does (jwt.router.ts `token`): the session's JWT, 401 without a
 * live session, the API key's principal, and 404 through the procedure when `jwt` is off.
 */
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leanPath } from "../../../rest-bridge/lean.ts";
import { signUp } from "../../harness/admin-helpers.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

/** What the bridge hands a lean path: the request's headers and somewhere to leave cookies. */
const leanRequest = (headers: Record<string, string>) => ({ headers, effects: { headers: {} } });
const viaTrpc = (bearer?: string) => get(`${server.url}/api/trpc/token`, bearer ? { bearer } : {});

describe("GET /token on the lean path", () => {
  it("is taken, and answers the session's JWT: the same token the procedure hands out (the per-session cache)", async () => {
    const user = await signUp(server);
    const pending = leanPath(server.portcullis.app, "token", leanRequest({ authorization: `Bearer ${user.token}` }), undefined);
    expect(pending, "the lean path is taken").toBeInstanceOf(Promise);
    expect(await pending).toEqual({ token: expect.any(String) });
    const rest = await get(`${server.auth}/token`, { bearer: user.token });
    expect(rest.status).toBe(200);
    expect(decodeJwt(rest.body.token)).toMatchObject({ sub: user.id, email: user.email });
    const trpc = await viaTrpc(user.token);
    expect(trpc.body.result.data.token).toBe(rest.body.token);
  });

  it("401 UNAUTHORIZED without a session, with a dead token and after sign-out, as the procedure answers", async () => {
    const user = await signUp(server);
    expect((await post(`${server.auth}/sign-out`, {}, { bearer: user.token })).status).toBe(200);
    for (const bearer of [undefined, "not-a-token", user.token]) {
      const rest = await get(`${server.auth}/token`, bearer ? { bearer } : {});
      expect(rest.status, String(bearer)).toBe(401);
      expect(rest.body).toEqual({ code: "UNAUTHORIZED", message: expect.any(String) });
      const trpc = await viaTrpc(bearer);
      expect(trpc.status).toBe(401);
      expect(trpc.body.error.data.code).toBe("UNAUTHORIZED");
    }
  });

  it("an API key's principal gets its JWT", async () => {
    const user = await signUp(server);
    const key = await post(`${server.auth}/api-key/create`, {}, { bearer: user.token });
    const res = await get(`${server.auth}/token`, { headers: { "x-api-key": key.body.key } });
    expect(res.status).toBe(200);
    expect(decodeJwt(res.body.token).sub).toBe(user.id);
  });

  it("an input, or jwt off: not the lean path; off answers 404 through the procedure", async () => {
    expect(leanPath(server.portcullis.app, "token", leanRequest({}), { x: 1 })).toBeUndefined();
    const off = await startTestServer({ jwt: { enabled: false } });
    try {
      expect(leanPath(off.portcullis.app, "token", leanRequest({}), undefined)).toBeUndefined();
      expect((await get(`${off.auth}/token`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});
