/**
 * GET {base}/get-session is answered by the bridge calling answerGetSession
 * directly (rest-bridge/get-session.ts); every other spelling of the path goes through the
 * general route and the tRPC procedure. All of them give one answer: body, cookie effects,
 * rate limit, headers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { DAY, MINUTE } from "../../harness/clock.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const COOKIE = "portcullis.session_token";
let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => server?.close());

async function signUp(): Promise<string> {
  const r = await post(`${server.auth}/sign-up/email`, { email: uniqueEmail("gs"), password: "password123", name: "GS" });
  expect(r.status).toBe(200);
  return r.body.token as string;
}

interface Seen {
  status: number;
  body: unknown;
  setCookie: string[];
  contentType: string | null;
  cacheControl: string | null;
}

const seen = (r: Reply, body: unknown): Seen => ({
  status: r.status,
  body,
  setCookie: r.headers.getSetCookie(),
  contentType: r.headers.get("content-type"),
  cacheControl: r.headers.get("cache-control"),
});

/** The same question asked three ways: the hot path, the general bridge route, tRPC. */
async function askAllWays(opts: { bearer?: string; cookie?: string }) {
  const hot = await get(`${server.auth}/get-session`, opts);
  const general = await get(`${server.auth}/get-session?disableCookieCache=true`, opts);
  const viaTrpc = await get(`${server.url}/api/trpc/getSession`, opts);
  return { hot: seen(hot, hot.body), general: seen(general, general.body), trpc: { ...seen(viaTrpc, viaTrpc.body?.result?.data), contentType: null, cacheControl: null } };
}

describe("get-session: one answer on every path", () => {
  it("a live session: the same body by Bearer and by cookie, on every path", async () => {
    const token = await signUp();
    for (const opts of [{ bearer: token }, { cookie: `${COOKIE}=${token}` }]) {
      const { hot, general, trpc } = await askAllWays(opts);
      expect(hot.status).toBe(200);
      expect((hot.body as { session: { token: string } }).session.token).toBe(token);
      expect(general).toEqual(hot);
      expect(trpc.body).toEqual(hot.body);
      expect(trpc.setCookie).toEqual(hot.setCookie);
      expect(hot.contentType).toBe("application/json; charset=utf-8");
      expect(hot.cacheControl).toBe("no-store");
      expect(hot.setCookie).toEqual([]);
    }
  });

  it("no token: null, no cookie", async () => {
    const { hot, general, trpc } = await askAllWays({});
    expect(hot).toMatchObject({ status: 200, body: null, setCookie: [] });
    expect(general).toEqual(hot);
    expect(trpc.body).toBeNull();
  });

  it("a cookie naming a dead session is cleared on every path; a Bearer of a dead session clears nothing", async () => {
    const token = await signUp();
    expect((await post(`${server.auth}/sign-out`, {}, { bearer: token })).status).toBe(200);
    const { hot, general, trpc } = await askAllWays({ cookie: `${COOKIE}=${token}` });
    expect(hot.body).toBeNull();
    expect(hot.setCookie).toEqual([`${COOKIE}=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax`]);
    expect(general).toEqual(hot);
    expect(trpc.setCookie).toEqual(hot.setCookie);
    const bearer = await askAllWays({ bearer: token });
    expect(bearer.hot).toMatchObject({ body: null, setCookie: [] });
    expect(bearer.general).toEqual(bearer.hot);
  });

  it("the sliding expiry re-sends the cookie from the hot path, once", async () => {
    const token = await signUp();
    server.clock.advance(DAY + MINUTE);
    const moved = await get(`${server.auth}/get-session`, { cookie: `${COOKIE}=${token}` });
    expect(moved.headers.getSetCookie()).toEqual([`${COOKIE}=${token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`]);
    const expiresAt = moved.body.session.expiresAt;
    expect(new Date(expiresAt).getTime()).toBe(server.clock.now().getTime() + 7 * DAY);
    const again = await askAllWays({ cookie: `${COOKIE}=${token}` });
    expect(again.hot.setCookie).toEqual([]);
    expect((again.hot.body as { session: { expiresAt: string } }).session.expiresAt).toBe(expiresAt);
    expect(again.general).toEqual(again.hot);
  });

  it("a revoke is seen at once on the hot path, cache on or not", async () => {
    const token = await signUp();
    expect((await get(`${server.auth}/get-session`, { bearer: token })).body).not.toBeNull(); // now cached
    const all = await post(`${server.auth}/revoke-sessions`, {}, { bearer: token });
    expect(all.status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: token })).body).toBeNull();
  });
});

describe("get-session rate limit on the hot path", () => {
  let limited: TestServer;
  beforeAll(async () => {
    limited = await startTestServer({ rateLimit: { enabled: true, rules: { "/get-session": { window: 10, max: 2 } } } });
  });
  afterAll(async () => limited?.close());

  it("counts the hot path and the other spellings under one key, and answers 429 with Retry-After", async () => {
    expect((await get(`${limited.auth}/get-session`)).status).toBe(200);
    expect((await get(`${limited.auth}/get-session?x=1`)).status).toBe(200);
    const third = await get(`${limited.auth}/get-session`);
    expect(third.status).toBe(429);
    expect(third.body.code).toBe("RATE_LIMITED");
    expect(Number(third.headers.get("retry-after"))).toBeGreaterThan(0);
  });
});
