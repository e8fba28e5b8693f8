import { createTRPCClient, httpLink, TRPCClientError } from "@trpc/client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AppRouter } from "../../../src/index.ts";
import { cookieFrom, get, post, request, TEST_ORIGIN, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/** The tRPC surface at /api/trpc (docs/wire-contract.md §1): plain JSON, contract statuses, error.data.authCode. */

let server: TestServer;
let trpc: string;
beforeAll(async () => {
  server = await startTestServer();
  trpc = `${server.url}/api/trpc`;
});
afterAll(async () => {
  await server?.close();
});

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{3})?Z$/;

function expectTrpcError(res: Reply, status: number, authCode: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.body).toEqual({
    error: {
      message: expect.any(String),
      code: expect.any(Number),
      data: expect.objectContaining({ authCode, httpStatus: status, code: expect.any(String) }),
    },
  });
  expect(res.body.error.data.stack).toBeUndefined();
  expect(res.text).not.toMatch(/\n\s+at /);
}

async function signUp(email = uniqueEmail("trpc")) {
  const res = await post(`${trpc}/signUp.email`, { name: "Trpc", email, password: "password123" });
  expect(res.status, res.text).toBe(200);
  const data = res.body.result.data;
  return { email, token: data.token as string, userId: data.user.id as string, res };
}

describe("queries", () => {
  it("GET getSession with a bearer answers { result: { data: { session, user } } } in plain JSON", async () => {
    const u = await signUp();
    const res = await get(`${trpc}/getSession`, { bearer: u.token });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["result"]);
    expect(Object.keys(res.body.result)).toEqual(["data"]);
    const { session, user } = res.body.result.data;
    expect(Object.keys(res.body.result.data).sort()).toEqual(["session", "user"]);
    expect(session).toMatchObject({ userId: u.userId, expiresAt: expect.stringMatching(ISO), createdAt: expect.stringMatching(ISO) });
    expect(session.token).toBe(u.token); // docs/wire-contract.md §2: the presented token, echoed
    expect(user).toMatchObject({ id: u.userId, email: u.email, emailVerified: false, role: "user", createdAt: expect.stringMatching(ISO) });
    // no transformer: no superjson envelope
    expect(res.text).not.toContain('"json"');
    expect(res.text).not.toContain('"meta"');

    // the same shapes as the bridge
    const bridge = await get(`${server.auth}/get-session`, { bearer: u.token });
    expect(res.body.result.data).toEqual(bridge.body);
  });

  it("GET getSession without a session answers data null", async () => {
    const res = await get(`${trpc}/getSession`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ result: { data: null } });
  });

  it("GET ok answers { ok: true }", async () => {
    const res = await get(`${trpc}/ok`);
    expect(res.body).toEqual({ result: { data: { ok: true } } });
  });

  it("a cookie works for queries without an Origin", async () => {
    const u = await signUp();
    const res = await request("GET", `${trpc}/getSession`, { headers: { cookie: `portcullis.session_token=${u.token}` } });
    expect(res.status).toBe(200);
    expect(res.body.result.data.user.id).toBe(u.userId);
  });
});

describe("mutations", () => {
  it("signUp.email sends set-cookie and set-auth-token like the bridge", async () => {
    const u = await signUp();
    expect(u.token).toMatch(/^[A-Za-z0-9_-]{32,}$/);
    expect(u.res.headers.get("set-auth-token")).toBe(u.token);
    expect(cookieFrom(u.res.headers)).toBe(`portcullis.session_token=${u.token}`);
    const line = u.res.headers.getSetCookie().find((c) => c.startsWith("portcullis.session_token="))!;
    expect(line).toMatch(/HttpOnly/i);
    expect(line).toMatch(/SameSite=Lax/i);
    expect(line).toMatch(/Path=\//);
    expect(line).toMatch(/Max-Age=604800/);
    expect(u.res.body.result.data.user).toMatchObject({ email: u.email, name: "Trpc", createdAt: expect.stringMatching(ISO) });
  });

  it("signIn.email answers the bridge's shape and sends the session headers", async () => {
    const u = await signUp();
    const res = await post(`${trpc}/signIn.email`, { email: u.email, password: "password123" });
    expect(res.status, res.text).toBe(200);
    const data = res.body.result.data;
    expect(data).toMatchObject({ redirect: false, url: null, token: expect.any(String), user: { id: u.userId } });
    expect(res.headers.get("set-auth-token")).toBe(data.token);
    expect(cookieFrom(res.headers)).toBe(`portcullis.session_token=${data.token}`);
  });

  it("USER_ALREADY_EXISTS is 409 CONFLICT with data.authCode", async () => {
    const u = await signUp();
    const res = await post(`${trpc}/signUp.email`, { name: "Again", email: u.email, password: "password123" });
    expectTrpcError(res, 409, "USER_ALREADY_EXISTS");
    expect(res.body.error.data.code).toBe("CONFLICT");
    expect(res.headers.get("set-auth-token")).toBeNull();
    expect(res.headers.getSetCookie()).toEqual([]);
  });

  it("a schema failure is 400 VALIDATION_ERROR with data.issues naming the field", async () => {
    const res = await post(`${trpc}/signUp.email`, { name: "NoPassword", email: uniqueEmail() });
    expectTrpcError(res, 400, "VALIDATION_ERROR");
    expect(res.body.error.message).toContain("password");
    expect(res.body.error.data.issues).toEqual(
      expect.arrayContaining([expect.objectContaining({ path: "password", message: expect.any(String) })]),
    );
  });

  it("UNAUTHORIZED is 401", async () => {
    const res = await post(`${trpc}/revokeSessions`, {});
    expectTrpcError(res, 401, "UNAUTHORIZED");
    const bad = await post(`${trpc}/updateUser`, { name: "x" }, { bearer: "not-a-real-token" });
    expectTrpcError(bad, 401, "UNAUTHORIZED");
    const list = await get(`${trpc}/listSessions`);
    expectTrpcError(list, 401, "UNAUTHORIZED");
  });

  it("a wrong password is 401 INVALID_EMAIL_OR_PASSWORD", async () => {
    const u = await signUp();
    const res = await post(`${trpc}/signIn.email`, { email: u.email, password: "wrong-password" });
    expectTrpcError(res, 401, "INVALID_EMAIL_OR_PASSWORD");
  });

  it("an unsafe callbackURL is 403 INVALID_CALLBACK_URL", async () => {
    const u = await signUp();
    const res = await post(`${trpc}/signIn.email`, { email: u.email, password: "password123", callbackURL: "https://evil.example/x" });
    expectTrpcError(res, 403, "INVALID_CALLBACK_URL");
  });

  it("malformed JSON is 400 INVALID_JSON", async () => {
    const res = await request("POST", `${trpc}/signUp.email`, { raw: "{nope", headers: { "content-type": "application/json" } });
    expectTrpcError(res, 400, "INVALID_JSON");
  });

  it("a body over 64 KiB is 413 PAYLOAD_TOO_LARGE", async () => {
    const email = uniqueEmail("big");
    const res = await post(`${trpc}/signUp.email`, { name: "n".repeat(70 * 1024), email, password: "password123" });
    expectTrpcError(res, 413, "PAYLOAD_TOO_LARGE");
    // nothing was created
    const after = await post(`${trpc}/signUp.email`, { name: "Later", email, password: "password123" });
    expect(after.status, after.text).toBe(200);
  });

  it("a foreign body type is 415 UNSUPPORTED_MEDIA_TYPE (JSON error body)", async () => {
    const res = await request("POST", `${trpc}/signUp.email`, { raw: "a=b", headers: { "content-type": "text/plain" } });
    expectTrpcError(res, 415, "UNSUPPORTED_MEDIA_TYPE");
  });
});

describe("unknown procedures and methods", () => {
  it("an unknown procedure is 404 NOT_FOUND", async () => {
    expectTrpcError(await get(`${trpc}/nope`), 404, "NOT_FOUND");
    expectTrpcError(await post(`${trpc}/nope.deeper`, {}), 404, "NOT_FOUND");
    expectTrpcError(await post(`${trpc}/signUp`, {}), 404, "NOT_FOUND");
    expectTrpcError(await get(`${trpc}`), 404, "NOT_FOUND");
  });

  it("a query called as a mutation or a mutation as a query is 404", async () => {
    expectTrpcError(await get(`${trpc}/signUp.email`), 404, "NOT_FOUND");
    expectTrpcError(await post(`${trpc}/getSession`, {}), 404, "NOT_FOUND");
  });
});

describe("CSRF on /api/trpc", () => {
  it("a cookie-carrying POST without Origin is 403 MISSING_OR_NULL_ORIGIN and does nothing", async () => {
    const u = await signUp();
    const cookie = `portcullis.session_token=${u.token}`;
    const res = await request("POST", `${trpc}/signOut`, { json: {}, headers: { cookie } });
    expectTrpcError(res, 403, "MISSING_OR_NULL_ORIGIN");
    const nul = await request("POST", `${trpc}/updateUser`, { json: { name: "Hacked" }, headers: { cookie, origin: "null" } });
    expectTrpcError(nul, 403, "MISSING_OR_NULL_ORIGIN");
    const evil = await request("POST", `${trpc}/signOut`, { json: {}, headers: { cookie, origin: "https://evil.example" } });
    expectTrpcError(evil, 403, "INVALID_ORIGIN");
    expect(evil.headers.getSetCookie()).toEqual([]);

    const still = await get(`${trpc}/getSession`, { bearer: u.token });
    expect(still.body.result.data.user).toMatchObject({ id: u.userId, name: "Trpc" });
  });

  it("the own origin and Bearer-only calls pass", async () => {
    const u = await signUp();
    const renamed = await post(`${trpc}/updateUser`, { name: "Renamed" }, { bearer: u.token });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toEqual({ result: { data: { status: true } } });

    const out = await request("POST", `${trpc}/signOut`, {
      json: {},
      headers: { cookie: `portcullis.session_token=${u.token}`, origin: TEST_ORIGIN },
    });
    expect(out.status, out.text).toBe(200);
    expect(out.body).toEqual({ result: { data: { success: true } } });
    // the cookie is cleared through tRPC too
    expect(out.headers.getSetCookie().some((c) => c.startsWith("portcullis.session_token=;") && /Max-Age=0/.test(c))).toBe(true);
    expect((await get(`${trpc}/getSession`, { bearer: u.token })).body).toEqual({ result: { data: null } });
  });
});

describe("@trpc/client without a transformer", () => {
  it("calls procedures and surfaces authCode on errors", async () => {
    let token: string | null = null;
    const client = createTRPCClient<AppRouter>({
      links: [httpLink({ url: trpc, headers: () => (token ? { authorization: `Bearer ${token}` } : {}) })],
    });
    expect(await client.ok.query()).toEqual({ ok: true });
    const email = uniqueEmail("client");
    const up = await client.signUp.email.mutate({ name: "Client", email, password: "password123" });
    expect(up.user.email).toBe(email);
    expect(typeof up.user.createdAt).toBe("string");
    token = up.token;
    const s = await client.getSession.query();
    expect(s?.user.id).toBe(up.user.id);

    const err = await client.signUp.email.mutate({ name: "Client", email, password: "password123" }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TRPCClientError);
    const data = (err as TRPCClientError<AppRouter>).data as { authCode?: string; httpStatus?: number } | undefined;
    expect(data?.authCode).toBe("USER_ALREADY_EXISTS");
    expect(data?.httpStatus).toBe(409);
  });
});
