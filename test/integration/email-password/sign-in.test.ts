import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Account, Session, User } from "../../../src/db/entities/index.ts";
import { HOUR, MINUTE } from "../../harness/clock.ts";
import { cookieFrom, get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COOKIE = "portcullis.session_token";
const PASSWORD = "password123";
const TRUSTED = "https://app.example.test";

function expectError(reply: Reply, status: number, code: string) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.code).toBe(code);
  expect(typeof reply.body.message).toBe("string");
  expect(reply.body.message.length).toBeGreaterThan(0);
}

function expectNoSession(reply: Reply) {
  expect(reply.headers.getSetCookie()).toEqual([]);
  expect(reply.headers.get("set-auth-token")).toBeNull();
}

function sessionCookieLine(headers: Headers): string | undefined {
  return headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
}

const sha256 = (s: string) => createHash("sha256").update(s).digest("hex");

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ trustedOrigins: [TRUSTED] });
});
afterAll(async () => {
  await server?.close();
});

async function newUser(s: TestServer = server, password = PASSWORD, email = uniqueEmail("signin")) {
  const r = await post(`${s.auth}/sign-up/email`, { name: "Signer", email, password });
  expect(r.status, r.text).toBe(200);
  return { email, password, id: r.body.user.id as string, token: r.body.token as string | null };
}

const signIn = (body: unknown, s: TestServer = server) => post(`${s.auth}/sign-in/email`, body);

describe("POST /sign-in/email: success", () => {
  it("answers { redirect: false, token, url: null, user }, sets the cookie and set-auth-token", async () => {
    const u = await newUser();
    const r = await signIn({ email: u.email, password: u.password });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["redirect", "token", "url", "user"]);
    expect(r.body.redirect).toBe(false);
    expect(r.body.url).toBeNull();
    expect(typeof r.body.token).toBe("string");
    expect(r.body.token).not.toBe(u.token); // a new session
    const user = r.body.user;
    expect(user.id).toBe(u.id);
    expect(user.id).toMatch(UUID);
    expect(user.email).toBe(u.email);
    expect(user.emailVerified).toBe(false);
    expect(user.role).toBe("user");
    expect(user.banned).toBe(false);
    expect(user.createdAt).toMatch(ISO);
    expect(user.updatedAt).toMatch(ISO);
    expect(user.twoFactorEnabled).toBe(false);
    expect(Object.keys(user)).toHaveLength(14);

    expect(r.headers.get("set-auth-token")).toBe(r.body.token);
    const line = sessionCookieLine(r.headers)!;
    expect(line).toBeDefined();
    expect(cookieFrom(r.headers)).toBe(`${COOKIE}=${r.body.token}`);
    expect(line).toMatch(/;\s*HttpOnly/i);
    expect(line).toMatch(/;\s*SameSite=Lax/i);
    expect(line).toMatch(/;\s*Path=\//);
    expect(line).toMatch(new RegExp(`;\\s*Max-Age=${7 * 24 * 3600}(;|$)`));

    const s = await get(`${server.auth}/get-session`, { bearer: r.body.token });
    expect(s.status).toBe(200);
    expect(s.body.user.id).toBe(u.id);
    expect(s.body.session.userId).toBe(u.id);
  });

  it("callbackURL \"/dashboard\" gives redirect: true, url: \"/dashboard\" (still a JSON 200)", async () => {
    const u = await newUser();
    const r = await signIn({ email: u.email, password: u.password, callbackURL: "/dashboard" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.redirect).toBe(true);
    expect(r.body.url).toBe("/dashboard");
    expect(typeof r.body.token).toBe("string");
  });

  it("callbackURL on a trusted origin is accepted", async () => {
    const u = await newUser();
    const r = await signIn({ email: u.email, password: u.password, callbackURL: `${TRUSTED}/after` });
    expect(r.status, r.text).toBe(200);
    expect(r.body.url).toBe(`${TRUSTED}/after`);
    expect(r.body.redirect).toBe(true);
  });

  for (const bad of ["https://evil.example/steal", "//evil.example/x", "/\\evil.example", "javascript:alert(1)", "http://127.0.0.1:3000.evil.example/"]) {
    it(`403 INVALID_CALLBACK_URL for callbackURL ${JSON.stringify(bad)}, before any session is made`, async () => {
      const u = await newUser();
      const r = await signIn({ email: u.email, password: u.password, callbackURL: bad });
      expectError(r, 403, "INVALID_CALLBACK_URL");
      expectNoSession(r);
    });
  }

  it("email is case-insensitive (and trimmed)", async () => {
    const u = await newUser();
    const r = await signIn({ email: `  ${u.email.toUpperCase()} `, password: u.password });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.id).toBe(u.id);
    expect(r.body.user.email).toBe(u.email);
  });

  it("accepts application/x-www-form-urlencoded with rememberMe=false: cookie without Max-Age", async () => {
    const u = await newUser();
    const r = await request("POST", `${server.auth}/sign-in/email`, {
      raw: new URLSearchParams({ email: u.email, password: u.password, rememberMe: "false" }).toString(),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.id).toBe(u.id);
    const line = sessionCookieLine(r.headers)!;
    expect(line).toContain(r.body.token);
    expect(line).not.toMatch(/Max-Age/i);
    expect(line).not.toMatch(/Expires/i);
    const s = await get(`${server.auth}/get-session`, { bearer: r.body.token });
    expect(Date.parse(s.body.session.expiresAt) - server.clock.now().getTime()).toBe(24 * HOUR);
  });

  it("rememberMe: false as a JSON boolean: cookie without Max-Age", async () => {
    const u = await newUser();
    const r = await signIn({ email: u.email, password: u.password, rememberMe: false });
    expect(r.status, r.text).toBe(200);
    expect(sessionCookieLine(r.headers)).not.toMatch(/Max-Age/i);
  });

  it("NFKC: a password with compatibility characters signs in with its NFKC form, and back", async () => {
    const fullwidth = "ｐassword１２３"; // fullwidth p, 1, 2, 3
    expect(fullwidth.normalize("NFKC")).toBe("password123");
    const a = await newUser(server, fullwidth);
    const r1 = await signIn({ email: a.email, password: "password123" });
    expect(r1.status, r1.text).toBe(200);
    expect(r1.body.user.id).toBe(a.id);
    expect((await signIn({ email: a.email, password: fullwidth })).status).toBe(200);

    const b = await newUser(server, "password123");
    const r2 = await signIn({ email: b.email, password: fullwidth });
    expect(r2.status, r2.text).toBe(200);
    expect(r2.body.user.id).toBe(b.id);
    // A genuinely different password still fails.
    expect((await signIn({ email: b.email, password: "Password123" })).status).toBe(401);
  });
});

describe("POST /sign-in/email: failures", () => {
  it("401 INVALID_EMAIL_OR_PASSWORD with identical bodies for an unknown email and a wrong password", async () => {
    const u = await newUser();
    const wrong = await signIn({ email: u.email, password: "wrong-password" });
    const unknown = await signIn({ email: uniqueEmail("nobody"), password: "wrong-password" });
    expectError(wrong, 401, "INVALID_EMAIL_OR_PASSWORD");
    expectError(unknown, 401, "INVALID_EMAIL_OR_PASSWORD");
    expect(wrong.text).toBe(unknown.text);
    expect(wrong.body).toEqual({ code: "INVALID_EMAIL_OR_PASSWORD", message: wrong.body.message });
    expectNoSession(wrong);
    expectNoSession(unknown);
  });

  it("400 VALIDATION_ERROR for a missing email or password, naming the field", async () => {
    const noEmail = await signIn({ password: PASSWORD });
    expectError(noEmail, 400, "VALIDATION_ERROR");
    expect(noEmail.body.message).toContain("email");
    expect(noEmail.body.issues.map((i: { path: string }) => i.path)).toContain("email");

    const noPassword = await signIn({ email: uniqueEmail() });
    expectError(noPassword, 400, "VALIDATION_ERROR");
    expect(noPassword.body.message).toContain("password");
    expect(noPassword.body.issues.map((i: { path: string }) => i.path)).toContain("password");

    expectError(await signIn({ email: "", password: PASSWORD }), 400, "VALIDATION_ERROR");
    expectError(await signIn({ email: 42, password: PASSWORD }), 400, "VALIDATION_ERROR");
  });

  it("400 INVALID_EMAIL for a malformed email", async () => {
    for (const bad of ["not-an-email", "a@", "@b.test"]) {
      expectError(await signIn({ email: bad, password: PASSWORD }), 400, "INVALID_EMAIL");
    }
  });

  it("a user without a credential account cannot sign in with any password", async () => {
    const u = await newUser();
    const em = server.portcullis.app.orm.em.fork();
    await em.nativeDelete(Account, { user: u.id });
    expectError(await signIn({ email: u.email, password: u.password }), 401, "INVALID_EMAIL_OR_PASSWORD");
  });
});

describe("POST /sign-in/email: bans", () => {
  it("403 BANNED_USER only after the right password; a wrong password is still 401", async () => {
    const u = await newUser();
    const em = server.portcullis.app.orm.em.fork();
    await em.nativeUpdate(User, { email: u.email }, { banned: true, banReason: "spam" });

    const wrong = await signIn({ email: u.email, password: "wrong-password" });
    expectError(wrong, 401, "INVALID_EMAIL_OR_PASSWORD");
    const right = await signIn({ email: u.email, password: u.password });
    expectError(right, 403, "BANNED_USER");
    expectNoSession(right);
    // Still banned, and no new session was written.
    const fresh = server.portcullis.app.orm.em.fork();
    expect((await fresh.findOneOrFail(User, { email: u.email })).banned).toBe(true);
    expect(await fresh.count(Session, { user: u.id })).toBe(1); // the sign-up session only
  });

  it("a ban that has not expired yet still blocks; once expired (injected clock) it lifts itself at sign-in", async () => {
    const u = await newUser();
    const em = server.portcullis.app.orm.em.fork();
    const banExpires = new Date(server.clock.now().getTime() + HOUR);
    await em.nativeUpdate(User, { email: u.email }, { banned: true, banReason: "cool off", banExpires });

    expectError(await signIn({ email: u.email, password: u.password }), 403, "BANNED_USER");
    server.clock.advance(HOUR + MINUTE);
    const r = await signIn({ email: u.email, password: u.password });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.banned).toBe(false);
    expect(r.body.user.banReason).toBeNull();
    expect(r.body.user.banExpires).toBeNull();

    const row = await server.portcullis.app.orm.em.fork().findOneOrFail(User, { email: u.email });
    expect(row.banned).toBe(false);
    expect(row.banReason ?? null).toBeNull();
    expect(row.banExpires ?? null).toBeNull();
    const s = await get(`${server.auth}/get-session`, { bearer: r.body.token });
    expect(s.body.user.banned).toBe(false);
  });

  it("a ban whose expiry is already in the past does not block", async () => {
    const u = await newUser();
    const em = server.portcullis.app.orm.em.fork();
    await em.nativeUpdate(User, { email: u.email }, { banned: true, banExpires: new Date(server.clock.now().getTime() - MINUTE) });
    const r = await signIn({ email: u.email, password: u.password });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.banned).toBe(false);
  });
});

describe("POST /sign-in/email: requireEmailVerification", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ emailAndPassword: { requireEmailVerification: true } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("403 EMAIL_NOT_VERIFIED after the right password, 401 for a wrong one; verified users sign in", async () => {
    const u = await newUser(s);
    expect(u.token).toBeNull();
    const wrong = await signIn({ email: u.email, password: "wrong-password" }, s);
    expectError(wrong, 401, "INVALID_EMAIL_OR_PASSWORD");
    const unverified = await signIn({ email: u.email, password: u.password }, s);
    expectError(unverified, 403, "EMAIL_NOT_VERIFIED");
    expectNoSession(unverified);

    const em = s.portcullis.app.orm.em.fork();
    await em.nativeUpdate(User, { email: u.email }, { emailVerified: true });
    const ok = await signIn({ email: u.email, password: u.password }, s);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.user.emailVerified).toBe(true);
    expect(typeof ok.body.token).toBe("string");
    expect(cookieFrom(ok.headers)).toBe(`${COOKIE}=${ok.body.token}`);
  });
});

describe("storage", () => {
  it("the password is stored as an argon2id hash with the OWASP parameters, never in clear", async () => {
    const password = "correct horse battery staple";
    const u = await newUser(server, password);
    const em = server.portcullis.app.orm.em.fork();
    const accounts = await em.find(Account, { user: u.id });
    expect(accounts).toHaveLength(1);
    const account = accounts[0]!;
    expect(account.providerId).toBe("credential");
    expect(account.accountId).toBe(u.id);
    expect(account.password).toMatch(/^\$argon2id\$v=19\$m=19456,t=2,p=1\$[A-Za-z0-9+/]+\$[A-Za-z0-9+/]+$/);
    expect(account.password).not.toContain(password);
    // Two users with the same password get different hashes (salted).
    const v = await newUser(server, password);
    const other = await em.findOneOrFail(Account, { user: v.id });
    expect(other.password).not.toBe(account.password);
  });

  it("the sessions table holds only the SHA-256 of each token, never the token", async () => {
    const u = await newUser();
    const signedIn = await signIn({ email: u.email, password: u.password });
    const tokens = [u.token!, signedIn.body.token as string];
    const conn = server.portcullis.app.orm.em.fork().getConnection();
    const rows: Record<string, unknown>[] = await conn.execute("select * from sessions");
    expect(rows.length).toBeGreaterThanOrEqual(2);
    const dump = JSON.stringify(rows);
    for (const token of tokens) {
      expect(dump).not.toContain(token);
      const mine = rows.filter((row) => row.token_hash === sha256(token));
      expect(mine).toHaveLength(1);
      expect(mine[0]!.user_id).toBe(u.id);
    }
    // Every column of every row, in case a driver returns buffers.
    for (const row of rows) {
      for (const value of Object.values(row)) {
        const text = Buffer.isBuffer(value) ? value.toString("utf8") : String(value);
        for (const token of tokens) expect(text).not.toContain(token);
      }
    }
  });
});

describe("tRPC signIn.email at /api/trpc", () => {
  const trpc = (input: unknown) => post(`${server.url}/api/trpc/signIn.email`, input);

  it("signs in with plain JSON input: same output shape, cookie and set-auth-token", async () => {
    const u = await newUser();
    const r = await trpc({ email: u.email.toUpperCase(), password: u.password, callbackURL: "/home" });
    expect(r.status, r.text).toBe(200);
    const data = r.body.result.data;
    expect(Object.keys(data).sort()).toEqual(["redirect", "token", "url", "user"]);
    expect(data.redirect).toBe(true);
    expect(data.url).toBe("/home");
    expect(data.user.id).toBe(u.id);
    expect(data.user.createdAt).toMatch(ISO);
    expect(r.headers.get("set-auth-token")).toBe(data.token);
    expect(cookieFrom(r.headers)).toBe(`${COOKIE}=${data.token}`);
    const s = await get(`${server.auth}/get-session`, { bearer: data.token });
    expect(s.body.user.id).toBe(u.id);
  });

  it("a wrong password is HTTP 401 with authCode INVALID_EMAIL_OR_PASSWORD", async () => {
    const u = await newUser();
    const r = await trpc({ email: u.email, password: "wrong-password" });
    expect(r.status, r.text).toBe(401);
    expect(r.body.error.data.authCode).toBe("INVALID_EMAIL_OR_PASSWORD");
    expect(r.body.error.data.httpStatus).toBe(401);
    expect(r.headers.getSetCookie()).toEqual([]);
  });

  it("a banned user is HTTP 403 with authCode BANNED_USER", async () => {
    const u = await newUser();
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { email: u.email }, { banned: true });
    const r = await trpc({ email: u.email, password: u.password });
    expect(r.status, r.text).toBe(403);
    expect(r.body.error.data.authCode).toBe("BANNED_USER");
  });
});
