/**
 * docs/wire-contract.md §3: the session cookie's name and attributes on sign-up, sign-in and sign-out,
 * over plain http, over an https public URL, and with a configured cookie prefix.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const PASSWORD = "password123";
const HTTPS_ORIGIN = "https://auth.example.test";
const SEVEN_DAYS_SEC = 7 * 24 * 3600;

interface ParsedCookie {
  name: string;
  value: string;
  /** Attribute name (lower-cased) → value ("" for flags). */
  attrs: Map<string, string>;
}

function parseSetCookie(line: string): ParsedCookie {
  const [pair, ...rest] = line.split(";").map((p) => p.trim());
  const eq = pair!.indexOf("=");
  const attrs = new Map<string, string>();
  for (const part of rest) {
    const i = part.indexOf("=");
    if (i === -1) attrs.set(part.toLowerCase(), "");
    else attrs.set(part.slice(0, i).toLowerCase(), part.slice(i + 1));
  }
  return { name: pair!.slice(0, eq), value: pair!.slice(eq + 1), attrs };
}

/** Every Set-Cookie line of the reply, parsed. */
function setCookies(reply: Reply): ParsedCookie[] {
  return reply.headers.getSetCookie().map(parseSetCookie);
}

/** The one Set-Cookie the reply carries; fails when there is not exactly one. */
function onlyCookie(reply: Reply): ParsedCookie {
  const all = setCookies(reply);
  expect(all).toHaveLength(1);
  return all[0]!;
}

function attrsOf(c: ParsedCookie): Record<string, string> {
  return Object.fromEntries(c.attrs);
}

async function signUp(server: TestServer, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const email = uniqueEmail("cookie");
  const reply = await post(`${server.auth}/sign-up/email`, { name: "Cookie", email, password: PASSWORD, ...extra }, { headers });
  expect(reply.status, reply.text).toBe(200);
  return { email, reply, token: reply.body.token as string };
}

describe("session cookie over http (default public URL)", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer();
  });
  afterAll(async () => {
    await server.close();
  });

  it("sign-up sets portcullis.session_token with Max-Age = 7 days, HttpOnly, SameSite=Lax, Path=/, no Secure", async () => {
    const { reply, token } = await signUp(server);
    expect(typeof token).toBe("string");
    expect(token.length).toBeGreaterThanOrEqual(20);
    expect(reply.headers.getSetCookie()).toEqual([
      `portcullis.session_token=${token}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`,
    ]);
    const c = onlyCookie(reply);
    expect(c.attrs.has("secure")).toBe(false);
    expect(c.attrs.has("expires")).toBe(false);
    expect(c.attrs.has("domain")).toBe(false);
    expect(reply.headers.get("set-auth-token")).toBe(token);
  });

  it("sign-in/email sets the same cookie for the new session", async () => {
    const { email, token: upToken } = await signUp(server);
    const reply = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD });
    expect(reply.status, reply.text).toBe(200);
    const token = reply.body.token as string;
    expect(typeof token).toBe("string");
    expect(token).not.toBe(upToken);
    expect(reply.headers.getSetCookie()).toEqual([
      `portcullis.session_token=${token}; Max-Age=${SEVEN_DAYS_SEC}; Path=/; HttpOnly; SameSite=Lax`,
    ]);
    expect(reply.headers.get("set-auth-token")).toBe(token);
    // The cookie value is a working session.
    const s = await get(`${server.auth}/get-session`, { cookie: `portcullis.session_token=${token}` });
    expect(s.status).toBe(200);
    expect(s.body.user.email).toBe(email);
  });

  it("sign-in/username sets the same cookie", async () => {
    const username = `cookie_${Date.now().toString(36)}`;
    await signUp(server, { username });
    const reply = await post(`${server.auth}/sign-in/username`, { username, password: PASSWORD });
    expect(reply.status, reply.text).toBe(200);
    const token = reply.body.token as string;
    expect(reply.headers.getSetCookie()).toEqual([
      `portcullis.session_token=${token}; Max-Age=${SEVEN_DAYS_SEC}; Path=/; HttpOnly; SameSite=Lax`,
    ]);
  });

  it("rememberMe false on sign-up gives a browser-session cookie (no Max-Age, no Expires)", async () => {
    const { reply, token } = await signUp(server, { rememberMe: false });
    expect(reply.headers.getSetCookie()).toEqual([`portcullis.session_token=${token}; Path=/; HttpOnly; SameSite=Lax`]);
    expect(reply.headers.get("set-auth-token")).toBe(token);
  });

  it("rememberMe false on sign-in (JSON and form-encoded) gives a browser-session cookie", async () => {
    const { email } = await signUp(server);
    const json = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD, rememberMe: false });
    expect(json.status, json.text).toBe(200);
    expect(json.headers.getSetCookie()).toEqual([
      `portcullis.session_token=${json.body.token}; Path=/; HttpOnly; SameSite=Lax`,
    ]);

    const form = await post(`${server.auth}/sign-in/email`, undefined, {
      raw: new URLSearchParams({ email, password: PASSWORD, rememberMe: "false" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.status, form.text).toBe(200);
    expect(form.headers.getSetCookie()).toEqual([
      `portcullis.session_token=${form.body.token}; Path=/; HttpOnly; SameSite=Lax`,
    ]);
  });

  it("rememberMe true is the default and keeps Max-Age", async () => {
    const { reply, token } = await signUp(server, { rememberMe: true });
    expect(reply.headers.getSetCookie()).toEqual([
      `portcullis.session_token=${token}; Max-Age=${SEVEN_DAYS_SEC}; Path=/; HttpOnly; SameSite=Lax`,
    ]);
  });

  it("a failed sign-in sets no cookie and no set-auth-token", async () => {
    const { email } = await signUp(server);
    const reply = await post(`${server.auth}/sign-in/email`, { email, password: "wrong-password" });
    expect(reply.status).toBe(401);
    expect(reply.headers.getSetCookie()).toEqual([]);
    expect(reply.headers.get("set-auth-token")).toBeNull();
  });

  it("sign-out with the cookie clears it (Max-Age=0) and deletes the session", async () => {
    const { token } = await signUp(server);
    const cookie = `portcullis.session_token=${token}`;
    const before = await get(`${server.auth}/get-session`, { cookie });
    expect(before.body?.session).toBeTruthy();

    const out = await post(`${server.auth}/sign-out`, undefined, { cookie });
    expect(out.status, out.text).toBe(200);
    expect(out.body).toEqual({ success: true });
    expect(out.headers.getSetCookie()).toEqual(["portcullis.session_token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"]);

    // Deleted in the database, not only forgotten by the browser: the raw token is dead too.
    const byCookie = await get(`${server.auth}/get-session`, { cookie });
    expect(byCookie.status).toBe(200);
    expect(byCookie.text).toBe("null");
    const byBearer = await get(`${server.auth}/get-session`, { bearer: token });
    expect(byBearer.text).toBe("null");
  });

  it("sign-out with a bearer token deletes that session and clears the cookie", async () => {
    const { token } = await signUp(server);
    const out = await post(`${server.auth}/sign-out`, undefined, { bearer: token });
    expect(out.status).toBe(200);
    expect(out.body).toEqual({ success: true });
    const cleared = onlyCookie(out);
    expect(cleared.name).toBe("portcullis.session_token");
    expect(cleared.value).toBe("");
    expect(cleared.attrs.get("max-age")).toBe("0");
    expect((await get(`${server.auth}/get-session`, { bearer: token })).text).toBe("null");
  });

  it("sign-out only deletes the session it was called with", async () => {
    const { email, token: first } = await signUp(server);
    const second = (await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD })).body.token as string;
    await post(`${server.auth}/sign-out`, undefined, { cookie: `portcullis.session_token=${first}` });
    expect((await get(`${server.auth}/get-session`, { bearer: first })).text).toBe("null");
    const alive = await get(`${server.auth}/get-session`, { bearer: second });
    expect(alive.body?.user.email).toBe(email);
  });

  it("sign-out with the cookie from a foreign origin is refused and the session survives", async () => {
    const { token } = await signUp(server);
    const cookie = `portcullis.session_token=${token}`;
    const out = await post(`${server.auth}/sign-out`, undefined, { cookie, headers: { origin: "https://evil.example" } });
    expect(out.status).toBe(403);
    expect(out.body).toEqual({ code: "INVALID_ORIGIN", message: expect.any(String) });
    expect(out.headers.getSetCookie()).toEqual([]);
    expect((await get(`${server.auth}/get-session`, { cookie })).body?.session).toBeTruthy();
  });

  it("a cookie under another name is not read", async () => {
    const { token } = await signUp(server);
    const s = await get(`${server.auth}/get-session`, { cookie: `__Secure-portcullis.session_token=${token}` });
    expect(s.status).toBe(200);
    expect(s.text).toBe("null");
  });
});

describe("session cookie with an https public URL", () => {
  let server: TestServer;
  const name = "__Secure-portcullis.session_token";
  beforeAll(async () => {
    server = await startTestServer({ publicUrl: HTTPS_ORIGIN });
  });
  afterAll(async () => {
    await server.close();
  });

  it("sign-up names the cookie __Secure-portcullis.session_token and marks it Secure", async () => {
    const { reply, token } = await signUp(server);
    const c = onlyCookie(reply);
    expect(c.name).toBe(name);
    expect(c.value).toBe(token);
    expect(attrsOf(c)).toEqual({ "max-age": String(SEVEN_DAYS_SEC), path: "/", httponly: "", secure: "", samesite: "Lax" });
    expect(reply.headers.get("set-auth-token")).toBe(token);
  });

  it("sign-in sets the same Secure cookie; rememberMe false drops Max-Age only", async () => {
    const { email } = await signUp(server);
    const reply = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD });
    expect(reply.status, reply.text).toBe(200);
    const c = onlyCookie(reply);
    expect(c.name).toBe(name);
    expect(c.value).toBe(reply.body.token);
    expect(attrsOf(c)).toEqual({ "max-age": String(SEVEN_DAYS_SEC), path: "/", httponly: "", secure: "", samesite: "Lax" });

    const short = await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD, rememberMe: false });
    const s = onlyCookie(short);
    expect(s.name).toBe(name);
    expect(attrsOf(s)).toEqual({ path: "/", httponly: "", secure: "", samesite: "Lax" });
  });

  it("reads the __Secure- cookie, ignores the plain name, and clears the __Secure- cookie on sign-out", async () => {
    const { token, email } = await signUp(server);
    const cookie = `${name}=${token}`;
    const s = await get(`${server.auth}/get-session`, { cookie });
    expect(s.body?.user.email).toBe(email);
    expect((await get(`${server.auth}/get-session`, { cookie: `portcullis.session_token=${token}` })).text).toBe("null");

    // The service's own origin is now the https one: the test origin is foreign.
    const foreign = await post(`${server.auth}/sign-out`, undefined, { cookie });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe("INVALID_ORIGIN");

    const out = await post(`${server.auth}/sign-out`, undefined, { cookie, headers: { origin: HTTPS_ORIGIN } });
    expect(out.status, out.text).toBe(200);
    expect(out.body).toEqual({ success: true });
    const c = onlyCookie(out);
    expect(c.name).toBe(name);
    expect(c.value).toBe("");
    expect(attrsOf(c)).toEqual({ "max-age": "0", path: "/", httponly: "", secure: "", samesite: "Lax" });
    expect((await get(`${server.auth}/get-session`, { cookie })).text).toBe("null");
  });
});

describe("cookiePrefix", () => {
  let server: TestServer;
  let secureServer: TestServer;
  beforeAll(async () => {
    [server, secureServer] = await Promise.all([
      startTestServer({ cookiePrefix: "acme" }),
      startTestServer({ cookiePrefix: "acme", publicUrl: HTTPS_ORIGIN }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([server.close(), secureServer.close()]);
  });

  it("names the cookie <prefix>.session_token and reads only that name", async () => {
    const { reply, token, email } = await signUp(server);
    expect(reply.headers.getSetCookie()).toEqual([
      `acme.session_token=${token}; Max-Age=${SEVEN_DAYS_SEC}; Path=/; HttpOnly; SameSite=Lax`,
    ]);
    const ok = await get(`${server.auth}/get-session`, { headers: { cookie: `acme.session_token=${token}` } });
    expect(ok.body?.user.email).toBe(email);
    const wrongName = await get(`${server.auth}/get-session`, { headers: { cookie: `portcullis.session_token=${token}` } });
    expect(wrongName.text).toBe("null");

    const out = await post(`${server.auth}/sign-out`, undefined, {
      headers: { cookie: `acme.session_token=${token}`, origin: "http://127.0.0.1:3000" },
    });
    expect(out.status, out.text).toBe(200);
    expect(out.headers.getSetCookie()).toEqual(["acme.session_token=; Max-Age=0; Path=/; HttpOnly; SameSite=Lax"]);
  });

  it("CSRF applies to the prefixed cookie too", async () => {
    const { token } = await signUp(server);
    const out = await post(`${server.auth}/sign-out`, undefined, { headers: { cookie: `acme.session_token=${token}` } });
    expect(out.status).toBe(403);
    expect(out.body.code).toBe("MISSING_OR_NULL_ORIGIN");
  });

  it("on https the prefix gets __Secure- in front", async () => {
    const { reply, token } = await signUp(secureServer);
    const c = onlyCookie(reply);
    expect(c.name).toBe("__Secure-acme.session_token");
    expect(c.value).toBe(token);
    expect(attrsOf(c)).toEqual({ "max-age": String(SEVEN_DAYS_SEC), path: "/", httponly: "", secure: "", samesite: "Lax" });
  });
});
