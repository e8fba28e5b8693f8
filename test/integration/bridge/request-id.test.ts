import { connect } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, uniqueEmail } from "../../harness/http.ts";
import { captureLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * X-Request-Id. A caller's sane id is taken and returned, anything else is replaced
 * by one of ours; every answer carries the id (general routes, the get-session fast path,
 * errors, tRPC, CORS preflights, node:http's own refusals) and the request's log line names it.
 * HEAD answers on the health routes.
 */

const OURS = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TRUSTED = "https://app.example.test";

let server: TestServer;
const log = captureLog("info");
let token: string;

beforeAll(async () => {
  server = await startTestServer({ trustedOrigins: [TRUSTED] }, { logger: log.logger });
  const up = await post(`${server.auth}/sign-up/email`, { name: "Rid", email: uniqueEmail("rid"), password: "request-id-pw-1" });
  expect(up.status).toBe(200);
  token = up.headers.get("set-auth-token")!;
});
afterAll(async () => {
  await server?.close();
});

/** A raw request line node:http refuses (no request object exists for it). */
async function refusedByParser(): Promise<string> {
  const url = new URL(server.url);
  const socket = connect(Number(url.port), url.hostname);
  let answer = "";
  socket.on("data", (d: Buffer) => (answer += d.toString()));
  await new Promise<void>((ok) => socket.once("connect", () => ok()));
  socket.write("GET /api/auth/ok HTTP/1.1\r\nhost: x\r\nbad header without colon\r\n\r\n");
  await new Promise<void>((ok) => socket.once("close", () => ok()));
  return answer;
}

describe(`X-Request-Id (${testDialect})`, () => {
  it("every answer carries one of ours when the caller sent none, each different", async () => {
    const answers = [
      await get(`${server.auth}/ok`),
      await request("HEAD", `${server.auth}/ready`),
      await get(`${server.auth}/get-session`), // fast path, no token
      await get(`${server.auth}/get-session`, { bearer: token }), // fast path, a session
      await get(`${server.auth}/nope`), // 404
      await post(`${server.auth}/sign-in/email`, { email: uniqueEmail("none"), password: "whatever-pw-1" }), // 401
      await get(`${server.url}/api/trpc/getSession`, { bearer: token }),
      await request("OPTIONS", `${server.auth}/sign-in/email`, { headers: { origin: TRUSTED, "access-control-request-method": "POST" } }),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200, 404, 401, 200, 204]);
    const ids = answers.map((a) => a.headers.get("x-request-id"));
    for (const id of ids) expect(id).toMatch(OURS);
    expect(new Set(ids).size).toBe(ids.length);
    const refused = await refusedByParser();
    expect(refused).toMatch(/^HTTP\/1\.1 400 /);
    expect(refused.toLowerCase()).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
  });

  it("a sane caller id comes back on every path and names the request in the log", async () => {
    const cases: [string, () => Promise<{ status: number; headers: Headers }>][] = [
      ["rid-general.1", () => get(`${server.auth}/ok`, { headers: { "x-request-id": "rid-general.1" } })],
      ["rid:fast/2=+@", () => get(`${server.auth}/get-session`, { bearer: token, headers: { "x-request-id": "rid:fast/2=+@" } })],
      ["Root=1-5759e988-bd862e3fe1be46a994272793", () => post(`${server.auth}/sign-in/email`, { email: uniqueEmail("x"), password: "whatever-pw-1" }, { headers: { "x-request-id": "Root=1-5759e988-bd862e3fe1be46a994272793" } })],
      ["0b5e1c3a-trpc", () => get(`${server.url}/api/trpc/getSession`, { headers: { "x-request-id": "0b5e1c3a-trpc" } })],
      ["x".repeat(128), () => get(`${server.auth}/ok`, { headers: { "x-request-id": "x".repeat(128) } })],
    ];
    for (const [id, send] of cases) {
      const res = await send();
      expect(res.headers.get("x-request-id"), id).toBe(id);
      const line = log.lines().find((l) => l.msg === "request" && l.requestId === id);
      expect(line, `log line for ${id}`).toMatchObject({ status: res.status });
    }
  });

  it("an id that is too long, empty or holds other characters is replaced by ours (and never logged)", async () => {
    for (const bad of ["x".repeat(129), "has space", "a,b", 'quo"te', "semi;colon", "tab\there", "<script>"]) {
      const res = await get(`${server.auth}/get-session`, { headers: { "x-request-id": bad } });
      expect(res.headers.get("x-request-id"), bad).toMatch(OURS);
      const general = await get(`${server.auth}/ok`, { headers: { "x-request-id": bad } });
      expect(general.headers.get("x-request-id"), bad).toMatch(OURS);
      expect(log.text).not.toContain(JSON.stringify(bad).slice(1, -1));
    }
  });
});

describe(`HEAD on the health routes (${testDialect})`, () => {
  it("HEAD /ok and /ready answer like GET without a body; other routes keep their one method", async () => {
    for (const path of ["/ok", "/ready"]) {
      const head = await fetch(`${server.auth}${path}`, { method: "HEAD" });
      expect(head.status, path).toBe(200);
      expect(head.headers.get("content-type")).toMatch(/application\/json/);
      expect(await head.text()).toBe("");
    }
    expect((await request("HEAD", `${server.auth}/sign-in/email`)).status).toBe(404);
    expect((await request("HEAD", `${server.auth}/list-sessions`, { bearer: token })).status).toBe(404);
  });
});
