import { request as httpRequest } from "node:http";
import { connect } from "node:net";
import { rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type PortcullisConfig } from "../../../src/index.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, request, TEST_ORIGIN, uniqueEmail, type Reply } from "../../harness/http.ts";
import { captureLog, type CapturedLog } from "../../harness/log-capture.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * The HTTP edge (rest-bridge/): §1 one spelling of a path for routing and rate limits,
 * §9 tRPC mutations take JSON only, §16 a client that aborts its upload is no server error,
 * §17 login CSRF, §18 trustProxy believes only the hops it is told to.
 *
 * The memory rate limiter counts real wall-clock windows, so each test uses client IPs of its
 * own (trustProxy + X-Forwarded-For) and stays well inside one 10 s window.
 */

const PASSWORD = "password123";
const EVIL = "https://evil.example";
const TRUSTED = "https://app.example";

let ipCounter = 0;
function nextIp(): string {
  ipCounter += 1;
  return `198.51.100.${ipCounter}`;
}

/** Exactly this request target on the wire: fetch would resolve `.`/`..` and keep nothing raw. */
function raw(base: string, method: string, target: string, headers: Record<string, string> = {}, body?: string): Promise<Reply> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: hostname, port, method, path: target, headers: { ...headers, ...(body === undefined ? {} : { "content-length": Buffer.byteLength(body) }) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) for (const one of [v ?? []].flat()) h.append(k, one);
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A POST with exactly these headers (Node's fetch would replace Sec-Fetch-Mode with its own "cors"). */
function postExactly(url: string, body: string, headers: Record<string, string>): Promise<Reply> {
  const { origin, pathname } = new URL(url);
  return raw(origin, "POST", pathname, { "content-type": "application/json", ...headers }, body);
}

function expectTrpcError(res: Reply, status: number, authCode: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.body?.error?.data).toMatchObject({ authCode, httpStatus: status });
}

function expectError(res: Reply, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.body).toMatchObject({ code });
}

/** Refused with nothing set: no cookie, no token. */
function expectNothingSet(res: Reply) {
  expect(res.headers.getSetCookie()).toEqual([]);
  expect(res.headers.get("set-auth-token")).toBeNull();
}

const servers: TestServer[] = [];
async function start(config: PortcullisConfig, options: Parameters<typeof startTestServer>[1] = {}): Promise<TestServer> {
  const s = await startTestServer(config, options);
  servers.push(s);
  return s;
}
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe(`§1 rate limits follow the route that runs, whatever the path's spelling (${testDialect})`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ rateLimit: { enabled: true, rules: { "/get-session": { window: 10, max: 2 } } }, trustProxy: true });
  });
  afterAll(async () => {
    await server?.close();
  });

  const signInJson = (email: string) => JSON.stringify({ email, password: PASSWORD });
  const signInAt = (target: string, ip: string) =>
    raw(server.url, "POST", target, { "content-type": "application/json", "x-forwarded-for": ip }, signInJson(uniqueEmail("nobody")));

  const REST_SPELLINGS = [
    "/api/auth/sign-in//email",
    "/api/auth//sign-in/email",
    "/api/auth/sign-in/email/",
    "/api/auth/sign-in/./email",
    "/api/auth/sign-in/x/../email",
    "/api/auth/sign-in/%2E/email",
    "/api/auth/sign-in/x/%2e%2E/email",
    "/api/auth/sign-in%2Femail",
    "/api/auth/sign-in/x%2F..%2Femail",
    "/api/auth/sign-in/%65mail",
    "/api/auth/sign-in/email%2F",
    "/api/trpc/../auth/sign-in/email",
  ];
  const TRPC_SPELLINGS = [
    "/api/trpc/signIn%2Eemail",
    "/api/trpc/signIn%2eemail",
    "/api/trpc/%73ignIn.email",
    "/api/trpc//signIn.email",
    "/api/trpc/signIn.email/",
    "/api/trpc/x/../signIn.email",
    "/api/trpc/x%2F..%2FsignIn.email",
    "/api/auth/../trpc/signIn.email",
  ];

  it("every REST spelling of /sign-in/email reaches it and is 429 once its budget of 3 is used", async () => {
    const ip = nextIp();
    for (let i = 0; i < 3; i++) expectError(await signInAt("/api/auth/sign-in/email", ip), 401, "INVALID_EMAIL_OR_PASSWORD");
    for (const target of REST_SPELLINGS) {
      const res = await signInAt(target, ip);
      expect(res.status, `${target}: ${res.text}`).toBe(429);
      expect(res.body).toMatchObject({ code: "RATE_LIMITED" });
    }
  });

  it("the spellings share one budget: three of them use it up for the canonical path", async () => {
    const ip = nextIp();
    for (const target of REST_SPELLINGS.slice(0, 3)) expectError(await signInAt(target, ip), 401, "INVALID_EMAIL_OR_PASSWORD");
    expectError(await signInAt("/api/auth/sign-in/email", ip), 429, "RATE_LIMITED");
    expectTrpcError(await signInAt("/api/trpc/signIn%2Eemail", ip), 429, "RATE_LIMITED");
  });

  it("every tRPC spelling of signIn.email is 429 once the budget is used (REST and tRPC share it)", async () => {
    const ip = nextIp();
    expectTrpcError(await signInAt("/api/trpc/signIn.email", ip), 401, "INVALID_EMAIL_OR_PASSWORD");
    expectError(await signInAt("/api/auth/sign-in/email", ip), 401, "INVALID_EMAIL_OR_PASSWORD");
    expectTrpcError(await signInAt("/api/trpc/signIn%2Eemail", ip), 401, "INVALID_EMAIL_OR_PASSWORD");
    for (const target of TRPC_SPELLINGS) expectTrpcError(await signInAt(target, ip), 429, "RATE_LIMITED");
    expectTrpcError(await signInAt("/api/trpc/signIn.email", ip), 429, "RATE_LIMITED");
  });

  it("a batched call is refused before any procedure runs and gives no fresh budget", async () => {
    const ip = nextIp();
    const email = uniqueEmail("batch");
    const up = await raw(server.url, "POST", "/api/auth/sign-up/email", { "content-type": "application/json", "x-forwarded-for": ip }, JSON.stringify({ name: "B", email, password: PASSWORD }));
    expect(up.status, up.text).toBe(200);
    const body = JSON.stringify({ 0: { email, password: PASSWORD }, 1: { email, password: PASSWORD } });
    for (const target of ["/api/trpc/signIn.email,signIn.email?batch=1", "/api/trpc/signIn%2Eemail%2CsignIn.email?batch=1", "/api/trpc/signIn.email?batch=1"]) {
      const res = await raw(server.url, "POST", target, { "content-type": "application/json", "x-forwarded-for": ip }, body);
      expect(res.status, `${target}: ${res.text}`).toBe(400);
      expectNothingSet(res);
    }
    // the budget of 3 is whole: nothing above ran or counted
    for (let i = 0; i < 3; i++) expect((await signInAt("/api/auth/sign-in/email", ip)).status).toBe(401);
    expectError(await signInAt("/api/auth/sign-in/email", ip), 429, "RATE_LIMITED");
  });

  it("GET forms: /get-session and the getSession query under other spellings share the route's budget", async () => {
    const ip = nextIp();
    const from = { "x-forwarded-for": ip };
    expect((await raw(server.url, "GET", "/api/auth/get-session", from)).status).toBe(200);
    expect((await raw(server.url, "GET", "/api/trpc/get%53ession", from)).status).toBe(200);
    expectError(await raw(server.url, "GET", "/api/auth/get-session/", from), 429, "RATE_LIMITED");
    expectError(await raw(server.url, "GET", "/api/auth//get%2Dsession", from), 429, "RATE_LIMITED");
    expectTrpcError(await raw(server.url, "GET", "/api/trpc/getSession/", from), 429, "RATE_LIMITED");
    expectTrpcError(await raw(server.url, "GET", "/api/trpc/%67etSession", from), 429, "RATE_LIMITED");
  });

  it("the router is case-sensitive: another case is a path with no route (404), not a fresh budget", async () => {
    const ip = nextIp();
    for (let i = 0; i < 3; i++) await signInAt("/api/auth/sign-in/email", ip);
    expectError(await signInAt("/api/auth/Sign-In/email", ip), 404, "NOT_FOUND");
    expectError(await signInAt("/api/auth/sign-in/%45mail", ip), 404, "NOT_FOUND");
    expectTrpcError(await signInAt("/api/trpc/SignIn.email", ip), 404, "NOT_FOUND");
    expectTrpcError(await signInAt("/api/trpc/signIn.Email", ip), 404, "NOT_FOUND");
    expectError(await signInAt("/api/auth/sign-in/%ZZ", ip), 404, "NOT_FOUND");
    // a literal "%" (from %25) is decoded once, never twice
    expectError(await signInAt("/api/auth/sign-in/%2565mail", ip), 404, "NOT_FOUND");
    expectTrpcError(await signInAt("/api/trpc/signIn%252Eemail", ip), 404, "NOT_FOUND");
  });
});

describe(`§9 tRPC mutations take application/json only (${testDialect})`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server?.close();
  });

  async function signedIn() {
    const up = await post(`${server.auth}/sign-up/email`, { name: "Media", email: uniqueEmail("media"), password: PASSWORD });
    expect(up.status, up.text).toBe(200);
    return up.body.token as string;
  }

  it("multipart/form-data, text/plain, application/octet-stream and a body without a type are 415, and the procedure does not run", async () => {
    const token = await signedIn();
    const form = new FormData();
    form.set("x", "y");
    const bearer = { authorization: `Bearer ${token}` };
    const attempts: [string, () => Promise<Response>][] = [
      ["multipart", () => fetch(`${server.url}/api/trpc/signOut`, { method: "POST", headers: bearer, body: form })],
      ["text", () => fetch(`${server.url}/api/trpc/signOut`, { method: "POST", headers: { ...bearer, "content-type": "text/plain" }, body: "{}" })],
      ["octet", () => fetch(`${server.url}/api/trpc/signOut`, { method: "POST", headers: { ...bearer, "content-type": "application/octet-stream" }, body: "{}" })],
      ["no type", () => fetch(`${server.url}/api/trpc/signOut`, { method: "POST", headers: bearer, body: new TextEncoder().encode("{}") })],
    ];
    for (const [label, send] of attempts) {
      const res = await send();
      const text = await res.text();
      expect(res.status, `${label}: ${text}`).toBe(415);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      expect(JSON.parse(text).error.data).toMatchObject({ authCode: "UNSUPPORTED_MEDIA_TYPE", httpStatus: 415 });
      // signOut did not run: the session is alive
      expect((await get(`${server.auth}/get-session`, { bearer: token })).body?.session, label).toBeTruthy();
    }
    const json = await post(`${server.url}/api/trpc/signOut`, {}, { bearer: token });
    expect(json.status, json.text).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: token })).body).toBeNull();
  });

  it("a multipart sign-up creates nothing", async () => {
    const email = uniqueEmail("multipart");
    const form = new FormData();
    form.set("name", "M");
    form.set("email", email);
    form.set("password", PASSWORD);
    const res = await fetch(`${server.url}/api/trpc/signUp.email`, { method: "POST", body: form });
    expect(res.status).toBe(415);
    const later = await post(`${server.url}/api/trpc/signUp.email`, { name: "M", email, password: PASSWORD });
    expect(later.status, later.text).toBe(200);
  });

  it("the bridge's documented form routes still take application/x-www-form-urlencoded", async () => {
    const email = uniqueEmail("form");
    const form = (path: string, body: string) => request("POST", `${server.auth}${path}`, { raw: body, headers: { "content-type": "application/x-www-form-urlencoded" } });
    const up = await form("/sign-up/email", new URLSearchParams({ name: "F", email, password: PASSWORD }).toString());
    expect(up.status, up.text).toBe(200);
    const signIn = await form("/sign-in/email", new URLSearchParams({ email, password: PASSWORD }).toString());
    expect(signIn.status, signIn.text).toBe(200);
    // and tRPC's JSON is unchanged, charset parameter included
    const json = await request("POST", `${server.url}/api/trpc/signIn.email`, { raw: JSON.stringify({ email, password: PASSWORD }), headers: { "content-type": "application/json; charset=utf-8" } });
    expect(json.status, json.text).toBe(200);
  });
});

describe(`§16 a client that aborts its upload is logged as aborted, never as a server error (${testDialect})`, () => {
  let server: TestServer;
  let log: CapturedLog;
  beforeAll(async () => {
    log = captureLog("trace");
    server = await startTestServer({}, { logger: log.logger });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** Headers and part of the body, then the connection is destroyed. */
  function abortUpload(target: string): Promise<void> {
    const { port } = new URL(server.url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.write(`POST ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n{"name":"Ab","email":"`);
        setTimeout(() => {
          socket.destroy();
          resolve();
        }, 50);
      });
      socket.on("error", reject);
    });
  }

  async function requestLine(route: string, after: number): Promise<Record<string, any>> {
    for (let i = 0; i < 100; i++) {
      const line = log.lines().slice(after).find((l) => l.msg === "request" && l.route === route);
      if (line) return line;
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no request line for ${route}: ${log.text.slice(-2000)}`);
  }

  for (const [surface, target, route] of [
    ["REST", "/api/auth/sign-up/email", "/sign-up/email"],
    ["tRPC", "/api/trpc/signUp.email", "trpc"],
  ] as const) {
    it(`${surface}: one info line "request" with aborted: true and status 499, no error line`, async () => {
      const before = log.lines().length;
      await abortUpload(target);
      const line = await requestLine(route, before);
      expect(line).toMatchObject({ level: 30, aborted: true, status: 499, method: "POST" });
      const after = log.lines().slice(before);
      expect(after.filter((l) => l.level >= 40), JSON.stringify(after)).toEqual([]);
      expect(log.text.slice(-4000)).not.toContain("unexpected failure");
      // the server carries on
      expect((await get(`${server.auth}/ok`)).status).toBe(200);
    });
  }
});

describe(`§17 login CSRF: sign-in and sign-up refuse a page elsewhere (${testDialect})`, () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ trustedOrigins: [TRUSTED] });
  });
  afterAll(async () => {
    await server?.close();
  });

  /** What a browser sends for `<form method=post action=…>` submitted on evil.example. */
  const CROSS_SITE_FORM = {
    "content-type": "application/x-www-form-urlencoded",
    origin: EVIL,
    "sec-fetch-site": "cross-site",
    "sec-fetch-mode": "navigate",
    "sec-fetch-dest": "document",
  };

  async function account() {
    const email = uniqueEmail("csrf");
    const up = await post(`${server.auth}/sign-up/email`, { name: "Victim", email, password: PASSWORD, username: `u${Date.now().toString(36)}${ipCounter++}` });
    expect(up.status, up.text).toBe(200);
    return { email, token: up.body.token as string, username: up.body.user.username as string };
  }
  const sessionCount = async (token: string) => ((await get(`${server.auth}/list-sessions`, { bearer: token })).body as unknown[]).length;

  it("a cross-site form POST to /sign-in/email is 403 INVALID_ORIGIN: no cookie, no session", async () => {
    const a = await account();
    const res = await postExactly(`${server.auth}/sign-in/email`, new URLSearchParams({ email: a.email, password: PASSWORD }).toString(), CROSS_SITE_FORM);
    expectError(res, 403, "INVALID_ORIGIN");
    expectNothingSet(res);
    expect(await sessionCount(a.token)).toBe(1);
  });

  it("a cross-site form POST to /sign-up/email is 403 INVALID_ORIGIN and creates no user", async () => {
    const email = uniqueEmail("csrf-up");
    const res = await postExactly(`${server.auth}/sign-up/email`, new URLSearchParams({ name: "Attacker", email, password: PASSWORD }).toString(), CROSS_SITE_FORM);
    expectError(res, 403, "INVALID_ORIGIN");
    expectNothingSet(res);
    const later = await post(`${server.auth}/sign-up/email`, { name: "Owner", email, password: PASSWORD });
    expect(later.status, later.text).toBe(200);
  });

  it("fetch metadata and Origin variants of a foreign page are refused on every login route, REST and tRPC", async () => {
    const a = await account();
    const refused: Record<string, string>[] = [
      { origin: EVIL },
      { origin: "null" },
      { origin: "null", referer: `${TEST_ORIGIN}/login` },
      { referer: `${EVIL}/page` },
      { "sec-fetch-site": "cross-site" },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", origin: EVIL },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", origin: TRUSTED },
      { "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors", origin: TEST_ORIGIN },
      { "sec-fetch-site": "same-site", "sec-fetch-mode": "cors", origin: "https://sub.127.0.0.1.example" },
      { "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors" },
    ];
    const calls: [string, string, unknown][] = [
      ["REST", "/sign-in/email", { email: a.email, password: PASSWORD }],
      ["REST", "/sign-in/username", { username: a.username, password: PASSWORD }],
      ["REST", "/sign-up/email", { name: "X", email: uniqueEmail("x"), password: PASSWORD }],
      ["REST", "/sign-in/social", { provider: "nope" }],
      ["tRPC", "signIn.email", { email: a.email, password: PASSWORD }],
      ["tRPC", "signIn.username", { username: a.username, password: PASSWORD }],
      ["tRPC", "signUp.email", { name: "X", email: uniqueEmail("x"), password: PASSWORD }],
      ["tRPC", "signIn.social", { provider: "nope" }],
    ];
    for (const headers of refused) {
      for (const [surface, path, body] of calls) {
        const url = surface === "REST" ? `${server.auth}${path}` : `${server.url}/api/trpc/${path}`;
        const res = await postExactly(url, JSON.stringify(body), headers);
        const label = `${surface} ${path} ${JSON.stringify(headers)}`;
        if (surface === "REST") expect(res.body, label).toMatchObject({ code: "INVALID_ORIGIN" });
        else expect(res.body?.error?.data?.authCode, label).toBe("INVALID_ORIGIN");
        expect(res.status, label).toBe(403);
        expectNothingSet(res);
      }
    }
    expect(await sessionCount(a.token)).toBe(1);
  });

  it("any cookie brings CONTRACT §3's rule: Origin required and trusted", async () => {
    const a = await account();
    const body = { email: a.email, password: PASSWORD };
    const noOrigin = await post(`${server.auth}/sign-in/email`, body, { headers: { cookie: "theme=dark" } });
    expectError(noOrigin, 403, "MISSING_OR_NULL_ORIGIN");
    expectNothingSet(noOrigin);
    expectError(await post(`${server.auth}/sign-in/email`, body, { headers: { cookie: "theme=dark", origin: EVIL } }), 403, "INVALID_ORIGIN");
    const own = await post(`${server.auth}/sign-in/email`, body, { headers: { cookie: "theme=dark", origin: TEST_ORIGIN } });
    expect(own.status, own.text).toBe(200);
  });

  it("no Origin and no fetch metadata (server-to-server, CLI), the own origin and trusted origins stay allowed", async () => {
    const a = await account();
    const body = { email: a.email, password: PASSWORD };
    const allowed: Record<string, string>[] = [
      {},
      { origin: TEST_ORIGIN },
      { origin: TEST_ORIGIN, "sec-fetch-site": "same-origin", "sec-fetch-mode": "cors", "sec-fetch-dest": "empty" },
      { referer: `${TEST_ORIGIN}/login` },
      { origin: TRUSTED, "sec-fetch-site": "same-site", "sec-fetch-mode": "cors" },
      // a trusted app on another site calling through CORS
      { origin: TRUSTED, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" },
      // Node's fetch sends Sec-Fetch-Mode alone, and is no browser
      { "sec-fetch-mode": "cors" },
    ];
    for (const headers of allowed) {
      const rest = await postExactly(`${server.auth}/sign-in/email`, JSON.stringify(body), headers);
      expect(rest.status, `REST ${JSON.stringify(headers)}: ${rest.text}`).toBe(200);
      const viaTrpc = await postExactly(`${server.url}/api/trpc/signIn.email`, JSON.stringify(body), headers);
      expect(viaTrpc.status, `tRPC ${JSON.stringify(headers)}: ${viaTrpc.text}`).toBe(200);
    }
    // a same-origin form post (progressive enhancement) too
    const form = await postExactly(`${server.auth}/sign-in/email`, new URLSearchParams(body).toString(), { ...CROSS_SITE_FORM, origin: TEST_ORIGIN, "sec-fetch-site": "same-origin" });
    expect(form.status, form.text).toBe(200);
  });

  it("other routes without a cookie are not affected (their CSRF rule is §3's)", async () => {
    const res = await postExactly(`${server.auth}/is-username-available`, JSON.stringify({ username: "free_name" }), { origin: EVIL, "sec-fetch-site": "cross-site", "sec-fetch-mode": "cors" });
    expect(res.status, res.text).toBe(200);
  });
});

describe(`§18 trustProxy believes only the hops it is told to (${testDialect})`, () => {
  const signIn = (s: TestServer, xff: string) => post(`${s.auth}/sign-in/email`, { email: uniqueEmail("nobody"), password: PASSWORD }, { headers: { "x-forwarded-for": xff } });
  const statuses = async (s: TestServer, xffs: string[]) => {
    const out: number[] = [];
    for (const xff of xffs) out.push((await signIn(s, xff)).status);
    return out;
  };

  it("true: the client is the entry the proxy appended; a forged leftmost entry gives no fresh budget", async () => {
    const s = await start({ rateLimit: { enabled: true }, trustProxy: true });
    const client = nextIp();
    expect(await statuses(s, [`1.1.1.1, ${client}`, `2.2.2.2, ${client}`, `3.3.3.3, ${client}`, `4.4.4.4, ${client}`])).toEqual([401, 401, 401, 429]);
    // another client behind the same proxy has its own budget
    expect(await statuses(s, [`1.1.1.1, ${nextIp()}`])).toEqual([401]);
  });

  it("true: the session records the client the proxy saw, not the forged entry", async () => {
    const s = await start({ trustProxy: true });
    const client = nextIp();
    const up = await post(`${s.auth}/sign-up/email`, { name: "P", email: uniqueEmail("proxy"), password: PASSWORD }, { headers: { "x-forwarded-for": `6.6.6.6, ${client}` } });
    expect(up.status, up.text).toBe(200);
    const session = await get(`${s.auth}/get-session`, { bearer: up.body.token });
    expect(session.body.session.ipAddress).toBe(client);
  });

  it("a number N trusts N hops: the (N)th entry from the right is the client", async () => {
    const s = await start({ rateLimit: { enabled: true }, trustProxy: 2 });
    const client = nextIp();
    const proxy = "10.0.0.2";
    expect(await statuses(s, [`1.1.1.1, ${client}, ${proxy}`, `2.2.2.2, ${client}, ${proxy}`, `${client}, ${proxy}`, `4.4.4.4, ${client}, ${proxy}`])).toEqual([401, 401, 401, 429]);
  });

  it("a list trusts those proxies only: a peer outside it is the client, whatever it forwards", async () => {
    const listed = await start({ rateLimit: { enabled: true }, trustProxy: ["loopback", "10.0.0.0/8"] });
    const client = nextIp();
    // 127.0.0.1 (the peer) and 10.1.2.3 are trusted proxies; the client is the next one left
    expect(await statuses(listed, [`1.1.1.1, ${client}, 10.1.2.3`, `2.2.2.2, ${client}`, `3.3.3.3, ${client}, 10.9.9.9`, `${client}`])).toEqual([401, 401, 401, 429]);

    const unlisted = await start({ rateLimit: { enabled: true }, trustProxy: ["10.0.0.0/8"] });
    // the loopback peer is not a listed proxy: X-Forwarded-For is ignored, all is 127.0.0.1
    expect(await statuses(unlisted, [nextIp(), nextIp(), nextIp(), nextIp()])).toEqual([401, 401, 401, 429]);
  });

  it("a list that is not addresses or CIDRs is a config error naming trustProxy", async () => {
    const file = join(tmpdir(), `pc_trustproxy_${process.pid}_${Date.now().toString(36)}.db`);
    const err = await createPortcullis({ databaseUrl: `sqlite:${file}`, logLevel: "silent", trustProxy: ["not-an-ip"] }).then(
      async (p) => {
        await p.close();
        return null;
      },
      (e: unknown) => e as Error,
    );
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${file}${suffix}`, { force: true });
    expect(err?.message).toMatch(/trustProxy/);
  });
});
