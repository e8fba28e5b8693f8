import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPortcullis, type Portcullis } from "../../../src/index.ts";
import { createTestDatabase, type TestDatabase } from "../../harness/database.ts";
import { cookieFrom, get, post, request, TEST_ORIGIN, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

/**
 * The REST bridge's own guards (docs/wire-contract.md §1, §3): routing, body parsing and limits,
 * error shapes, CSRF origin checks and callback URL checks.
 */

const KiB = 1024;

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ trustedOrigins: ["https://app.example"] });
});
afterAll(async () => {
  await server?.close();
});

/** Every error: JSON content type and a `{ code, message }` body (+ issues on validation errors). */
function expectError(res: Reply, status: number, code: string) {
  expect(res.status, res.text).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
  expect(res.body).toMatchObject({ code, message: expect.any(String) });
  expect(res.body.message.length).toBeGreaterThan(0);
  const allowed = new Set(["code", "message", "issues", "requestId"]);
  for (const key of Object.keys(res.body)) expect(allowed.has(key), `unexpected key ${key}`).toBe(true);
  expect(res.text).not.toMatch(/\n\s+at /);
}

async function countUsers(s: TestServer | Portcullis): Promise<number> {
  const orm = "portcullis" in s ? s.portcullis.app.orm : s.app.orm;
  const rows = await orm.em.fork().getConnection().execute<{ n: number | string }[]>("select count(*) as n from users");
  return Number(rows[0]!.n);
}

async function signUp(email = uniqueEmail("bridge")) {
  const res = await post(`${server.auth}/sign-up/email`, { name: "Bridge", email, password: "password123" });
  expect(res.status, res.text).toBe(200);
  return { email, token: res.body.token as string, userId: res.body.user.id as string, cookie: cookieFrom(res.headers)! };
}

/** A sign-up body whose JSON serialization is exactly `bytes` long. */
function signUpBodyOfSize(bytes: number, email: string): string {
  const base = JSON.stringify({ name: "", email, password: "password123" });
  const body = JSON.stringify({ name: "n".repeat(bytes - base.length), email, password: "password123" });
  expect(Buffer.byteLength(body)).toBe(bytes);
  return body;
}

/** A body streamed in chunks (no content-length: chunked transfer encoding). */
async function streamed(url: string, total: number, contentType = "application/json"): Promise<Reply> {
  const chunk = 8 * KiB;
  let sent = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= total) {
        controller.close();
        return;
      }
      const n = Math.min(chunk, total - sent);
      // `{"name":"` + spaces...: large and never valid JSON, so only the size guard can answer first.
      const bytes = new Uint8Array(n).fill(0x20);
      if (sent === 0) bytes.set(new TextEncoder().encode('{"name":"'));
      sent += n;
      controller.enqueue(bytes);
    },
  });
  const res = await fetch(url, {
    method: "POST",
    headers: { "content-type": contentType },
    body,
    duplex: "half",
  } as RequestInit & { duplex: "half" });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

describe("routing", () => {
  it("GET /ok answers { ok: true }", async () => {
    const res = await get(`${server.auth}/ok`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    expect(res.body).toEqual({ ok: true });
  });

  it("unknown paths answer 404 NOT_FOUND", async () => {
    for (const path of ["/nope", "/sign-in", "/sign-in/email/extra", "/OK", "", "/"]) {
      expectError(await get(`${server.auth}${path}`), 404, "NOT_FOUND");
    }
    expectError(await post(`${server.auth}/does-not-exist`, {}), 404, "NOT_FOUND");
    expectError(await get(`${server.url}/somewhere/else`), 404, "NOT_FOUND");
    expectError(await get(`${server.url}/api/authx/ok`), 404, "NOT_FOUND");
  });

  it("a known path with the wrong method answers 404 NOT_FOUND", async () => {
    expectError(await get(`${server.auth}/sign-in/email`), 404, "NOT_FOUND");
    expectError(await get(`${server.auth}/sign-out`), 404, "NOT_FOUND");
    expectError(await post(`${server.auth}/ok`, {}), 404, "NOT_FOUND");
    expectError(await post(`${server.auth}/get-session`, {}), 404, "NOT_FOUND");
    for (const method of ["PUT", "DELETE", "PATCH"]) {
      expectError(await request(method, `${server.auth}/sign-up/email`, { json: {} }), 404, "NOT_FOUND");
    }
  });
});

describe("body parsing", () => {
  it("malformed JSON answers 400 INVALID_JSON", async () => {
    for (const raw of ["{", '{"email": }', "not json", '{"a":1}}']) {
      const res = await request("POST", `${server.auth}/sign-in/email`, { raw, headers: { "content-type": "application/json" } });
      expectError(res, 400, "INVALID_JSON");
    }
    // charset parameter does not change the media type
    const res = await request("POST", `${server.auth}/sign-up/email`, {
      raw: "{oops",
      headers: { "content-type": "application/json; charset=utf-8" },
    });
    expectError(res, 400, "INVALID_JSON");
  });

  it("text/plain and multipart bodies answer 415 UNSUPPORTED_MEDIA_TYPE", async () => {
    const email = uniqueEmail("media");
    const before = await countUsers(server);
    const json = JSON.stringify({ name: "M", email, password: "password123" });
    // a JSON text sent as text/plain (the classic CSRF "simple request") is still refused
    expectError(
      await request("POST", `${server.auth}/sign-up/email`, { raw: json, headers: { "content-type": "text/plain" } }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    const multipart = `--b\r\nContent-Disposition: form-data; name="email"\r\n\r\n${email}\r\n--b--\r\n`;
    expectError(
      await request("POST", `${server.auth}/sign-in/email`, {
        raw: multipart,
        headers: { "content-type": "multipart/form-data; boundary=b" },
      }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    const form = new FormData();
    form.set("name", "M");
    form.set("email", email);
    form.set("password", "password123");
    const viaFetch = await fetch(`${server.auth}/sign-up/email`, { method: "POST", body: form });
    expect(viaFetch.status).toBe(415);
    expect(await viaFetch.json()).toMatchObject({ code: "UNSUPPORTED_MEDIA_TYPE" });
    // a body-less POST route still refuses a foreign body type
    expectError(
      await request("POST", `${server.auth}/revoke-sessions`, { raw: "x", headers: { "content-type": "text/plain" } }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    expect(await countUsers(server)).toBe(before);
  });

  it("form-urlencoded is accepted where the contract allows it and refused elsewhere", async () => {
    const form = { "content-type": "application/x-www-form-urlencoded" };
    // JSON-only routes
    expectError(
      await request("POST", `${server.auth}/sign-in/username`, { raw: "username=someone&password=password123", headers: form }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    expectError(
      await request("POST", `${server.auth}/is-username-available`, { raw: "username=someone", headers: form }),
      415,
      "UNSUPPORTED_MEDIA_TYPE",
    );
    // form routes: parsed and handed to the procedure
    const email = uniqueEmail("form");
    const up = await request("POST", `${server.auth}/sign-up/email`, {
      raw: new URLSearchParams({ name: "Form", email, password: "password123" }).toString(),
      headers: form,
    });
    expect(up.status, up.text).toBe(200);
    expect(up.body.user.email).toBe(email);
    const wrong = await request("POST", `${server.auth}/sign-in/email`, {
      raw: new URLSearchParams({ email, password: "wrong-password" }).toString(),
      headers: form,
    });
    expectError(wrong, 401, "INVALID_EMAIL_OR_PASSWORD");
  });

  it("a body of exactly 64 KiB is read; one byte more answers 413 PAYLOAD_TOO_LARGE", async () => {
    const okEmail = uniqueEmail("limit");
    const atLimit = await request("POST", `${server.auth}/sign-up/email`, {
      raw: signUpBodyOfSize(64 * KiB, okEmail),
      headers: { "content-type": "application/json" },
    });
    // parsed, then refused by the schema (name is at most 1024 characters), not by the size guard
    expectError(atLimit, 400, "VALIDATION_ERROR");

    const before = await countUsers(server);
    const email = uniqueEmail("big");
    const over = await request("POST", `${server.auth}/sign-up/email`, {
      raw: signUpBodyOfSize(64 * KiB + 1, email),
      headers: { "content-type": "application/json" },
    });
    expectError(over, 413, "PAYLOAD_TOO_LARGE");
    expect(await countUsers(server)).toBe(before);
    // the email is still free
    const after = await post(`${server.auth}/sign-up/email`, { name: "Later", email, password: "password123" });
    expect(after.status, after.text).toBe(200);
  });

  it("a large body with a content-length answers 413 and creates no user", async () => {
    const before = await countUsers(server);
    const email = uniqueEmail("huge");
    const res = await request("POST", `${server.auth}/sign-up/email`, {
      raw: signUpBodyOfSize(1024 * KiB, email),
      headers: { "content-type": "application/json" },
    });
    expectError(res, 413, "PAYLOAD_TOO_LARGE");
    // form bodies too
    const formRes = await request("POST", `${server.auth}/sign-in/email`, {
      raw: `email=${email}&password=${"p".repeat(100 * KiB)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectError(formRes, 413, "PAYLOAD_TOO_LARGE");
    expect(await countUsers(server)).toBe(before);
  });

  it("a streamed (chunked) body without content-length answers 413 once it passes 64 KiB", async () => {
    const before = await countUsers(server);
    for (const total of [64 * KiB + 1, 200 * KiB, 2048 * KiB]) {
      const res = await streamed(`${server.auth}/sign-up/email`, total);
      expectError(res, 413, "PAYLOAD_TOO_LARGE");
    }
    expect(await countUsers(server)).toBe(before);
    // the server still answers normally afterwards
    expect((await get(`${server.auth}/ok`)).body).toEqual({ ok: true });
  });

  it("a streamed body within the limit is read normally", async () => {
    const res = await streamed(`${server.auth}/sign-in/email`, 4 * KiB);
    // `{"name":"   ...` is cut off, so it is not JSON
    expectError(res, 400, "INVALID_JSON");
  });

  it("validation errors are 400 VALIDATION_ERROR naming the fields, with issues", async () => {
    const res = await post(`${server.auth}/sign-in/email`, { email: "someone@example.test" });
    expectError(res, 400, "VALIDATION_ERROR");
    expect(res.body.message).toContain("password");
    expect(res.body.issues).toEqual(expect.arrayContaining([expect.objectContaining({ path: "password", message: expect.any(String) })]));
  });
});

describe("CSRF (origin check on cookie-carrying requests)", () => {
  it("a POST with the session cookie and no Origin/Referer is 403 MISSING_OR_NULL_ORIGIN and does nothing", async () => {
    const u = await signUp();
    const res = await request("POST", `${server.auth}/sign-out`, { headers: { cookie: u.cookie } });
    expectError(res, 403, "MISSING_OR_NULL_ORIGIN");
    expect(res.headers.getSetCookie()).toEqual([]);
    const still = await get(`${server.auth}/get-session`, { bearer: u.token });
    expect(still.body?.user?.id).toBe(u.userId);
  });

  it('Origin "null" is treated as missing', async () => {
    const u = await signUp();
    const res = await request("POST", `${server.auth}/sign-out`, { headers: { cookie: u.cookie, origin: "null" } });
    expectError(res, 403, "MISSING_OR_NULL_ORIGIN");
    const upd = await request("POST", `${server.auth}/update-user`, {
      json: { name: "Hacked" },
      headers: { cookie: u.cookie, origin: "null" },
    });
    expectError(upd, 403, "MISSING_OR_NULL_ORIGIN");
    const still = await get(`${server.auth}/get-session`, { bearer: u.token });
    expect(still.body.user.name).toBe("Bridge");
  });

  it("a foreign Origin is 403 INVALID_ORIGIN and the action does not happen", async () => {
    const u = await signUp();
    const out = await request("POST", `${server.auth}/sign-out`, { headers: { cookie: u.cookie, origin: "https://evil.example" } });
    expectError(out, 403, "INVALID_ORIGIN");
    expect(out.headers.getSetCookie()).toEqual([]);
    const upd = await request("POST", `${server.auth}/update-user`, {
      json: { name: "Hacked" },
      headers: { cookie: u.cookie, origin: "https://evil.example" },
    });
    expectError(upd, 403, "INVALID_ORIGIN");
    const revoke = await request("POST", `${server.auth}/revoke-sessions`, {
      headers: { cookie: u.cookie, origin: "http://127.0.0.1:3001" },
    });
    expectError(revoke, 403, "INVALID_ORIGIN");
    // a look-alike of our own origin (other scheme) is foreign too
    const scheme = await request("POST", `${server.auth}/sign-out`, { headers: { cookie: u.cookie, origin: "https://127.0.0.1:3000" } });
    expectError(scheme, 403, "INVALID_ORIGIN");
    // a foreign Referer when Origin is absent
    const ref = await request("POST", `${server.auth}/sign-out`, {
      headers: { cookie: u.cookie, referer: "https://evil.example/page" },
    });
    expectError(ref, 403, "INVALID_ORIGIN");

    const still = await get(`${server.auth}/get-session`, { bearer: u.token });
    expect(still.status).toBe(200);
    expect(still.body.user.id).toBe(u.userId);
    expect(still.body.user.name).toBe("Bridge");
  });

  it("the own origin, by Origin or by Referer, is accepted", async () => {
    const u = await signUp();
    const byReferer = await request("POST", `${server.auth}/update-user`, {
      json: { name: "Via Referer" },
      headers: { cookie: u.cookie, referer: `${TEST_ORIGIN}/settings/profile?tab=1` },
    });
    expect(byReferer.status, byReferer.text).toBe(200);
    expect(byReferer.body).toEqual({ status: true });
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.user.name).toBe("Via Referer");

    const byOrigin = await request("POST", `${server.auth}/sign-out`, { headers: { cookie: u.cookie, origin: TEST_ORIGIN } });
    expect(byOrigin.status, byOrigin.text).toBe(200);
    expect(byOrigin.body).toEqual({ success: true });
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body).toBeNull();
  });

  it("an origin from trustedOrigins is accepted", async () => {
    const u = await signUp();
    const res = await request("POST", `${server.auth}/update-user`, {
      json: { name: "Trusted" },
      headers: { cookie: u.cookie, origin: "https://app.example" },
    });
    expect(res.status, res.text).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.user.name).toBe("Trusted");
    const ref = await request("POST", `${server.auth}/sign-out`, {
      headers: { cookie: u.cookie, referer: "https://app.example/logout" },
    });
    expect(ref.status, ref.text).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body).toBeNull();
  });

  it("a Bearer-only POST needs no Origin", async () => {
    const u = await signUp();
    const res = await request("POST", `${server.auth}/update-user`, { json: { name: "Bearer" }, bearer: u.token });
    expect(res.status, res.text).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body.user.name).toBe("Bearer");
    const out = await request("POST", `${server.auth}/sign-out`, { bearer: u.token });
    expect(out.status, out.text).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: u.token })).body).toBeNull();
  });

  it("a POST with unrelated cookies only is not subject to the check", async () => {
    const res = await request("POST", `${server.auth}/is-username-available`, {
      json: { username: "free_name" },
      headers: { cookie: "theme=dark; other=1" },
    });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ available: true });
  });

  it("a GET with the cookie needs no Origin", async () => {
    const u = await signUp();
    const s = await request("GET", `${server.auth}/get-session`, { headers: { cookie: u.cookie } });
    expect(s.status).toBe(200);
    expect(s.body.user.id).toBe(u.userId);
    const list = await request("GET", `${server.auth}/list-sessions`, { headers: { cookie: u.cookie, origin: "https://evil.example" } });
    expect(list.status).toBe(200);
    expect(Array.isArray(list.body)).toBe(true);
    expect(list.body).toHaveLength(1);
  });
});

describe("callback URLs (open-redirect defence)", () => {
  let email: string;
  beforeAll(async () => {
    ({ email } = await signUp());
  });

  for (const callbackURL of ["//evil.example", "https://evil.example/x", "javascript:alert(1)", "/\\evil.example", "http://127.0.0.1:3001/x"]) {
    it(`sign-in/email refuses callbackURL ${JSON.stringify(callbackURL)} with 403 INVALID_CALLBACK_URL`, async () => {
      const res = await post(`${server.auth}/sign-in/email`, { email, password: "password123", callbackURL });
      expectError(res, 403, "INVALID_CALLBACK_URL");
      expect(res.headers.get("set-auth-token")).toBeNull();
      expect(res.headers.getSetCookie()).toEqual([]);
    });
  }

  it("sign-up/email refuses a foreign callbackURL and creates no user", async () => {
    const before = await countUsers(server);
    const res = await post(`${server.auth}/sign-up/email`, {
      name: "Cb",
      email: uniqueEmail("cb"),
      password: "password123",
      callbackURL: "https://evil.example/welcome",
    });
    expectError(res, 403, "INVALID_CALLBACK_URL");
    expect(await countUsers(server)).toBe(before);
  });

  it("a relative path and a trusted origin pass", async () => {
    const rel = await post(`${server.auth}/sign-in/email`, { email, password: "password123", callbackURL: "/ok/path" });
    expect(rel.status, rel.text).toBe(200);
    expect(rel.body).toMatchObject({ redirect: true, url: "/ok/path", token: expect.any(String) });

    const trusted = await post(`${server.auth}/sign-in/email`, { email, password: "password123", callbackURL: "https://app.example/done?x=1" });
    expect(trusted.status, trusted.text).toBe(200);
    expect(trusted.body).toMatchObject({ redirect: true, url: "https://app.example/done?x=1" });

    const own = await post(`${server.auth}/sign-in/email`, { email, password: "password123", callbackURL: `${TEST_ORIGIN}/dashboard` });
    expect(own.status, own.text).toBe(200);
    expect(own.body.url).toBe(`${TEST_ORIGIN}/dashboard`);
  });
});

describe("unexpected failures", () => {
  let db: TestDatabase;
  let portcullis: Portcullis;
  let base: string;
  const logLines: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    const sink = new Writable({
      write(chunk, _enc, done) {
        logLines.push(String(chunk));
        done();
      },
    });
    portcullis = await createPortcullis(
      { databaseUrl: db.url, secret: "test-secret-test-secret-test-secret-0123", rateLimit: { enabled: false } },
      { logger: pino({ level: "error" }, sink) },
    );
    base = `${await portcullis.listen(0, "127.0.0.1")}/api/auth`;
  });
  afterAll(async () => {
    await portcullis?.close();
    await db?.drop();
  });

  it("a 500 is INTERNAL_SERVER_ERROR with a requestId that is in the log, and never a stack or internal message", async () => {
    // Break the database under the running service: the users table disappears.
    await portcullis.app.orm.em.fork().getConnection().execute("alter table users rename to users_gone");
    const res = await post(`${base}/sign-up/email`, { name: "X", email: uniqueEmail("boom"), password: "password123" });
    expectError(res, 500, "INTERNAL_SERVER_ERROR");
    expect(res.body.message).toBe("Unexpected failure");
    expect(Object.keys(res.body).sort()).toEqual(["code", "message", "requestId"]);
    expect(res.body.requestId).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body).toEqual({ code: "INTERNAL_SERVER_ERROR", message: "Unexpected failure", requestId: expect.any(String) });
    expect(res.text).not.toMatch(/users|table|relation|sqlite|postgres|exception|stack|\.ts\b|\n\s+at /i);
    expect(logLines.some((l) => l.includes(res.body.requestId) && l.includes("unexpected failure"))).toBe(true);
    await portcullis.app.orm.em.fork().getConnection().execute("alter table users_gone rename to users");
    const ok = await post(`${base}/sign-up/email`, { name: "X", email: uniqueEmail("fine"), password: "password123" });
    expect(ok.status, ok.text).toBe(200);
  });
});
