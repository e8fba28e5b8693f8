import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { cookieFrom, get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const COOKIE = "portcullis.session_token";
const PASSWORD = "password123";

function expectError(reply: Reply, status: number, code: string) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.code).toBe(code);
  expect(typeof reply.body.message).toBe("string");
  expect(reply.body.message.length).toBeGreaterThan(0);
}

/** A fresh valid username (letters, digits, `_`), mixed case, <= 30 chars. */
function uniqueUsername(prefix = "User"): string {
  return `${prefix}_${randomBytes(5).toString("hex")}`;
}

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const signUp = (body: Record<string, unknown>, s: TestServer = server) =>
  post(`${s.auth}/sign-up/email`, { name: "U", email: uniqueEmail("uname"), password: PASSWORD, ...body });
const signInUsername = (body: unknown, s: TestServer = server) => post(`${s.auth}/sign-in/username`, body);
const available = (body: unknown) => post(`${server.auth}/is-username-available`, body);

describe("sign-up with a username", () => {
  it("stores the username lower-cased; displayUsername defaults to the raw username", async () => {
    const raw = uniqueUsername("Mixed.Case");
    const r = await signUp({ username: raw });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.username).toBe(raw.toLowerCase());
    expect(r.body.user.displayUsername).toBe(raw);
    const row = await server.portcullis.app.orm.em.fork().findOneOrFail(User, { id: r.body.user.id });
    expect(row.username).toBe(raw.toLowerCase());
    expect(row.displayUsername).toBe(raw);
  });

  it("displayUsername keeps the case as given", async () => {
    const raw = uniqueUsername("plain");
    const r = await signUp({ username: raw, displayUsername: "The.Plain_One" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.username).toBe(raw.toLowerCase());
    expect(r.body.user.displayUsername).toBe("The.Plain_One");
  });

  it("accepts 3 and 30 characters, letters, digits, _ and .", async () => {
    const three = "a_1"; // the database is fresh per file and nothing else here is this short
    const r3 = await signUp({ username: three });
    expect(r3.status, r3.text).toBe(200);
    expect(r3.body.user.username).toBe(three);
    const thirty = `Z.${randomBytes(14).toString("hex")}`;
    expect(thirty).toHaveLength(30);
    const r30 = await signUp({ username: thirty });
    expect(r30.status, r30.text).toBe(200);
    expect(r30.body.user.username).toBe(thirty.toLowerCase());
  });

  it("400 USERNAME_TOO_SHORT under 3 characters", async () => {
    expectError(await signUp({ username: "ab" }), 400, "USERNAME_TOO_SHORT");
    expectError(await signUp({ username: "" }), 400, "USERNAME_TOO_SHORT");
  });

  it("400 USERNAME_TOO_LONG over 30 characters", async () => {
    expectError(await signUp({ username: "a".repeat(31) }), 400, "USERNAME_TOO_LONG");
  });

  for (const bad of ["bad name!", "with space", "dash-ed", "emoji😀x", "semi;colon", "at@sign"]) {
    it(`400 INVALID_USERNAME for ${JSON.stringify(bad)}`, async () => {
      expectError(await signUp({ username: bad }), 400, "INVALID_USERNAME");
    });
  }

  it("a rejected username creates no user (the email stays free)", async () => {
    const email = uniqueEmail("badname");
    expectError(await signUp({ email, username: "bad name!" }), 400, "INVALID_USERNAME");
    const ok = await signUp({ email, username: uniqueUsername() });
    expect(ok.status, ok.text).toBe(200);
  });

  it("409 USERNAME_IS_ALREADY_TAKEN, case-insensitively; the email stays free", async () => {
    const raw = uniqueUsername("Taken");
    expect((await signUp({ username: raw })).status).toBe(200);
    for (const variant of [raw, raw.toLowerCase(), raw.toUpperCase()]) {
      const email = uniqueEmail("second");
      const r = await signUp({ email, username: variant });
      expectError(r, 409, "USERNAME_IS_ALREADY_TAKEN");
      expect(r.headers.getSetCookie()).toEqual([]);
      // Nothing half-written: the email can still sign up without that username.
      expect((await signUp({ email })).status).toBe(200);
    }
  });

  it("an email that contains the word \"username\" still gets USER_ALREADY_EXISTS, not the username code", async () => {
    const email = uniqueEmail("username");
    expect((await signUp({ email, username: uniqueUsername() })).status).toBe(200);
    expectError(await signUp({ email, username: uniqueUsername() }), 409, "USER_ALREADY_EXISTS");
    expectError(await signUp({ email }), 409, "USER_ALREADY_EXISTS");
  });

  it("concurrent sign-ups with the same username (different emails): exactly one 200, the rest 409, never 500", async () => {
    const raw = uniqueUsername("Race");
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signUp({ username: i % 2 ? raw.toUpperCase() : raw, email: uniqueEmail(`race${i}`) })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses, replies.map((r) => r.text).join("\n")).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.code).toBe("USERNAME_IS_ALREADY_TAKEN");
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(User, { username: raw.toLowerCase() })).toBe(1);
    // The losers left no user behind.
    const winner = replies.find((r) => r.status === 200)!;
    const losers = replies.filter((r) => r.status !== 200);
    expect(losers).toHaveLength(7);
    const signIn = await signInUsername({ username: raw, password: PASSWORD });
    expect(signIn.status, signIn.text).toBe(200);
    expect(signIn.body.user.id).toBe(winner.body.user.id);
  });
});

describe("POST /sign-in/username", () => {
  let raw: string;
  let email: string;
  let userId: string;
  beforeAll(async () => {
    raw = uniqueUsername("Signer");
    email = uniqueEmail("unamesignin");
    const r = await signUp({ username: raw, email });
    expect(r.status, r.text).toBe(200);
    userId = r.body.user.id;
  });

  it("answers { redirect: false, token, url: null, user } with cookie and set-auth-token", async () => {
    const r = await signInUsername({ username: raw, password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["redirect", "token", "url", "user"]);
    expect(r.body.redirect).toBe(false);
    expect(r.body.url).toBeNull();
    expect(typeof r.body.token).toBe("string");
    expect(r.body.user.id).toBe(userId);
    expect(r.body.user.email).toBe(email);
    expect(r.body.user.username).toBe(raw.toLowerCase());
    expect(r.body.user.displayUsername).toBe(raw);
    expect(Object.keys(r.body.user)).toHaveLength(14);
    expect(r.headers.get("set-auth-token")).toBe(r.body.token);
    expect(cookieFrom(r.headers)).toBe(`${COOKIE}=${r.body.token}`);
    const s = await get(`${server.auth}/get-session`, { bearer: r.body.token });
    expect(s.body.user.id).toBe(userId);
  });

  it("callbackURL \"/dashboard\" gives redirect: true; an untrusted one is 403 INVALID_CALLBACK_URL", async () => {
    const r = await signInUsername({ username: raw, password: PASSWORD, callbackURL: "/dashboard" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.redirect).toBe(true);
    expect(r.body.url).toBe("/dashboard");
    const bad = await signInUsername({ username: raw, password: PASSWORD, callbackURL: "https://evil.example/" });
    expectError(bad, 403, "INVALID_CALLBACK_URL");
    expect(bad.headers.getSetCookie()).toEqual([]);
  });

  it("rememberMe: false gives a cookie without Max-Age", async () => {
    const r = await signInUsername({ username: raw, password: PASSWORD, rememberMe: false });
    expect(r.status, r.text).toBe(200);
    const line = r.headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
    expect(line).toContain(r.body.token);
    expect(line).not.toMatch(/Max-Age/i);
  });

  it("username is case-insensitive", async () => {
    for (const variant of [raw.toUpperCase(), raw.toLowerCase(), ` ${raw} `]) {
      const r = await signInUsername({ username: variant, password: PASSWORD });
      expect(r.status, `${variant}: ${r.text}`).toBe(200);
      expect(r.body.user.id).toBe(userId);
    }
  });

  it("401 INVALID_USERNAME_OR_PASSWORD with identical bodies for an unknown username and a wrong password", async () => {
    const wrong = await signInUsername({ username: raw, password: "wrong-password" });
    const unknown = await signInUsername({ username: uniqueUsername("ghost"), password: "wrong-password" });
    const malformed = await signInUsername({ username: "bad name!", password: "wrong-password" });
    for (const r of [wrong, unknown, malformed]) {
      expectError(r, 401, "INVALID_USERNAME_OR_PASSWORD");
      expect(r.headers.getSetCookie()).toEqual([]);
      expect(r.headers.get("set-auth-token")).toBeNull();
    }
    expect(wrong.text).toBe(unknown.text);
    expect(malformed.text).toBe(unknown.text);
  });

  it("the email is not a username", async () => {
    expectError(await signInUsername({ username: email, password: PASSWORD }), 401, "INVALID_USERNAME_OR_PASSWORD");
  });

  it("400 VALIDATION_ERROR when username or password is missing, naming the field", async () => {
    const noUser = await signInUsername({ password: PASSWORD });
    expectError(noUser, 400, "VALIDATION_ERROR");
    expect(noUser.body.message).toContain("username");
    expect(noUser.body.issues.map((i: { path: string }) => i.path)).toContain("username");
    const noPassword = await signInUsername({ username: raw });
    expectError(noPassword, 400, "VALIDATION_ERROR");
    expect(noPassword.body.message).toContain("password");
    expect(noPassword.body.issues.map((i: { path: string }) => i.path)).toContain("password");
    expectError(await signInUsername({}), 400, "VALIDATION_ERROR");
    expectError(await signInUsername({ username: "", password: PASSWORD }), 400, "VALIDATION_ERROR");
  });

  it("403 BANNED_USER after the right password only", async () => {
    const name = uniqueUsername("Banned");
    const up = await signUp({ username: name });
    expect(up.status).toBe(200);
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: up.body.user.id }, { banned: true });
    expectError(await signInUsername({ username: name, password: "wrong-password" }), 401, "INVALID_USERNAME_OR_PASSWORD");
    const r = await signInUsername({ username: name, password: PASSWORD });
    expectError(r, 403, "BANNED_USER");
    expect(r.headers.getSetCookie()).toEqual([]);
  });

  it("signs in through tRPC at /api/trpc/signIn.username", async () => {
    const r = await post(`${server.url}/api/trpc/signIn.username`, { username: raw.toUpperCase(), password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(r.body.result.data.user.id).toBe(userId);
    expect(r.headers.get("set-auth-token")).toBe(r.body.result.data.token);
    const bad = await post(`${server.url}/api/trpc/signIn.username`, { username: raw, password: "nope-nope" });
    expect(bad.status).toBe(401);
    expect(bad.body.error.data.authCode).toBe("INVALID_USERNAME_OR_PASSWORD");
  });
});

describe("POST /sign-in/username with requireEmailVerification", () => {
  let s: TestServer;
  beforeAll(async () => {
    s = await startTestServer({ emailAndPassword: { requireEmailVerification: true } });
  });
  afterAll(async () => {
    await s?.close();
  });

  it("403 EMAIL_NOT_VERIFIED until the email is verified", async () => {
    const name = uniqueUsername("Unverified");
    const up = await signUp({ username: name }, s);
    expect(up.status, up.text).toBe(200);
    expect(up.body.token).toBeNull();
    expectError(await signInUsername({ username: name, password: "wrong-password" }, s), 401, "INVALID_USERNAME_OR_PASSWORD");
    expectError(await signInUsername({ username: name, password: PASSWORD }, s), 403, "EMAIL_NOT_VERIFIED");
    await s.portcullis.app.orm.em.fork().nativeUpdate(User, { id: up.body.user.id }, { emailVerified: true });
    const ok = await signInUsername({ username: name, password: PASSWORD }, s);
    expect(ok.status, ok.text).toBe(200);
    expect(ok.body.user.emailVerified).toBe(true);
  });
});

describe("POST /is-username-available", () => {
  it("true for a free username, false for a taken one in any case", async () => {
    const raw = uniqueUsername("Avail");
    const free = await available({ username: raw });
    expect(free.status, free.text).toBe(200);
    expect(free.body).toEqual({ available: true });
    expect((await signUp({ username: raw })).status).toBe(200);
    for (const variant of [raw, raw.toLowerCase(), raw.toUpperCase()]) {
      const taken = await available({ username: variant });
      expect(taken.status, taken.text).toBe(200);
      expect(taken.body).toEqual({ available: false });
    }
  });

  it("400 for invalid usernames, with the sign-up codes", async () => {
    expectError(await available({ username: "ab" }), 400, "USERNAME_TOO_SHORT");
    expectError(await available({ username: "a".repeat(31) }), 400, "USERNAME_TOO_LONG");
    expectError(await available({ username: "bad name!" }), 400, "INVALID_USERNAME");
  });

  it("400 VALIDATION_ERROR when username is missing or not a string", async () => {
    const missing = await available({});
    expectError(missing, 400, "VALIDATION_ERROR");
    expect(missing.body.message).toContain("username");
    expect(missing.body.issues.map((i: { path: string }) => i.path)).toContain("username");
    expectError(await available({ username: 123 }), 400, "VALIDATION_ERROR");
  });

  it("is also served over tRPC", async () => {
    const r = await post(`${server.url}/api/trpc/isUsernameAvailable`, { username: uniqueUsername() });
    expect(r.status, r.text).toBe(200);
    expect(r.body.result.data).toEqual({ available: true });
  });
});
