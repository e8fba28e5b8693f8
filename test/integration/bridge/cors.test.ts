import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "../../../rest-bridge/routes.ts";
import { cookieFrom, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * CORS for `trustedOrigins` at the HTTP level: preflights on every bridge route and
 * on /api/trpc, the headers of actual answers (the get-session fast path, errors, tRPC), and
 * nothing CORS for other origins. test/browser/cors.test.ts shows a browser honouring them.
 */

const APP = "https://app.example.com";
const EVIL = "https://evil.example.net";
let server: TestServer;

beforeAll(async () => {
  // A trailing slash and a path in the config still name the origin.
  server = await startTestServer({ trustedOrigins: [`${APP}/`, "http://localhost:5173/some/path"] });
});
afterAll(async () => {
  await server?.close();
});

const preflight = (url: string, origin: string, method = "POST", headers = "content-type") =>
  request("OPTIONS", url, { headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers } });

function corsHeaders(res: Reply): Record<string, string> {
  return Object.fromEntries([...res.headers].filter(([name]) => name.startsWith("access-control-")));
}

function expectPreflightAnswered(res: Reply, origin: string) {
  expect(res.status, res.text).toBe(204);
  expect(res.text).toBe("");
  expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  expect(res.headers.get("access-control-allow-credentials")).toBe("true");
  expect(res.headers.get("access-control-allow-methods")?.split(/,\s*/)).toEqual(expect.arrayContaining(["GET", "POST"]));
  expect(Number(res.headers.get("access-control-max-age"))).toBeGreaterThan(0);
  expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
}

function expectActualCors(res: Reply, origin: string) {
  expect(res.headers.get("access-control-allow-origin")).toBe(origin);
  expect(res.headers.get("access-control-allow-credentials")).toBe("true");
  expect(res.headers.get("access-control-expose-headers")?.split(/,\s*/)).toEqual(expect.arrayContaining(["set-auth-token", "set-auth-jwt", "x-request-id"]));
  expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
}

describe("CORS preflight", () => {
  it("answers 204 for a trusted origin on every route of the bridge table, with the route's method", async () => {
    for (const route of routes) {
      const path = route.path.replace(/:[A-Za-z]+/g, "x");
      const res = await preflight(`${server.auth}${path}`, APP, route.method, "content-type");
      expectPreflightAnswered(res, APP);
      expect(res.headers.get("access-control-allow-methods"), route.path).toContain(route.method);
    }
  });

  it("answers on /api/trpc procedures too, for the config's other origin", async () => {
    for (const path of ["/api/trpc/signUp.email", "/api/trpc/getSession", "/api/trpc/admin.listUsers?input=%7B%7D"]) {
      expectPreflightAnswered(await preflight(`${server.url}${path}`, "http://localhost:5173"), "http://localhost:5173");
    }
  });

  it("allows the requested headers it accepts and leaves out the others", async () => {
    const res = await preflight(`${server.auth}/sign-in/email`, APP, "POST", "Content-Type,authorization, X-Request-Id ,x-custom-thing");
    expectPreflightAnswered(res, APP);
    expect(res.headers.get("access-control-allow-headers")).toBe("content-type, authorization, x-request-id");
    const none = await preflight(`${server.auth}/sign-in/email`, APP, "POST", "x-custom-thing");
    expectPreflightAnswered(none, APP);
    expect(none.headers.get("access-control-allow-headers")).toBeNull();
  });

  it("gives other origins nothing CORS: no allow headers, whatever the path", async () => {
    for (const origin of [EVIL, "null", `${APP}.evil.net`, "http://app.example.com", "https://app.example.com:8443"]) {
      for (const url of [`${server.auth}/sign-up/email`, `${server.url}/api/trpc/signUp.email`, `${server.auth}/get-session`]) {
        const res = await preflight(url, origin);
        expect(res.status, `${origin} ${url}`).not.toBe(204);
        expect(corsHeaders(res), `${origin} ${url}`).toEqual({});
      }
    }
  });

  it("is not answered outside the bridge and /api/trpc, nor without Access-Control-Request-Method", async () => {
    expect(corsHeaders(await preflight(`${server.url}/elsewhere`, APP))).toEqual({});
    const plain = await request("OPTIONS", `${server.auth}/sign-up/email`, { headers: { origin: APP } });
    expect(plain.status).not.toBe(204);
  });
});

describe("CORS on actual answers", () => {
  it("sign-up, get-session (fast path) and an error answer carry the headers for a trusted origin", async () => {
    const email = uniqueEmail("cors");
    const up = await request("POST", `${server.auth}/sign-up/email`, { json: { name: "Cors", email, password: "cors-password-1" }, headers: { origin: APP } });
    expect(up.status, up.text).toBe(200);
    expectActualCors(up, APP);
    expect(up.headers.get("set-auth-token")).toBe(up.body.token);

    const cookie = cookieFrom(up.headers)!;
    const session = await request("GET", `${server.auth}/get-session`, { headers: { origin: APP, cookie } });
    expect(session.body.user.email).toBe(email);
    expectActualCors(session, APP);

    const refused = await request("GET", `${server.auth}/list-sessions`, { headers: { origin: APP } });
    expect(refused.status).toBe(401);
    expectActualCors(refused, APP);
  });

  it("tRPC answers carry them too, the exposed list intact where the answer sets a token", async () => {
    const email = uniqueEmail("cors-trpc");
    const up = await request("POST", `${server.url}/api/trpc/signUp.email`, { json: { name: "Cors", email, password: "cors-password-1" }, headers: { origin: APP } });
    expect(up.status, up.text).toBe(200);
    expectActualCors(up, APP);
    expect(up.headers.get("set-auth-token")).toMatch(/\S/);
    const session = await request("GET", `${server.url}/api/trpc/getSession`, { headers: { origin: APP }, bearer: up.headers.get("set-auth-token")! });
    expect(session.body.result.data.user.email).toBe(email);
    expectActualCors(session, APP);
  });

  it("no Origin, an untrusted Origin: no CORS headers, not even Vary", async () => {
    for (const headers of [{}, { origin: EVIL }] as Record<string, string>[]) {
      const res = await request("GET", `${server.auth}/get-session`, { headers });
      expect(res.status).toBe(200);
      expect(corsHeaders(res)).toEqual({});
      expect(res.headers.get("vary")).toBeNull();
      const trpc = await request("GET", `${server.url}/api/trpc/getSession`, { headers });
      expect(trpc.status).toBe(200);
      expect(trpc.headers.get("access-control-allow-origin")).toBeNull();
    }
  });
});
