import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User } from "../../../src/db/entities/index.ts";
import { cookieFrom, get, post, request, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const COOKIE = "portcullis.session_token";
const PASSWORD = "password123";

/** Set-Cookie line for the session cookie, split into lower-cased attributes. */
function sessionCookieAttributes(headers: Headers): { value: string; attrs: Map<string, string> } | null {
  const line = headers.getSetCookie().find((c) => c.startsWith(`${COOKIE}=`));
  if (!line) return null;
  const [pair, ...rest] = line.split(";").map((s) => s.trim());
  const attrs = new Map<string, string>();
  for (const a of rest) {
    const [k, ...v] = a.split("=");
    attrs.set(k!.toLowerCase(), v.join("="));
  }
  return { value: pair!.slice(COOKIE.length + 1), attrs };
}

function expectError(reply: Reply, status: number, code: string) {
  expect(reply.status, reply.text).toBe(status);
  expect(reply.body.code).toBe(code);
  expect(typeof reply.body.message).toBe("string");
  expect(reply.body.message.length).toBeGreaterThan(0);
  expect(reply.text).not.toMatch(/at .*\.ts:\d+/); // never a stack
}

const form = (fields: Record<string, string>) => ({
  raw: new URLSearchParams(fields).toString(),
  headers: { "content-type": "application/x-www-form-urlencoded" },
});

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const signUp = (body: unknown, s: TestServer = server) => post(`${s.auth}/sign-up/email`, body);

describe("POST /sign-up/email: success", () => {
  it("answers { token, user } with every user field of the contract, and sets the cookie and set-auth-token", async () => {
    const email = uniqueEmail("Shape").replace("shape", "Shape.MiXeD");
    const before = server.clock.now().toISOString();
    const r = await signUp({ name: "Ada Lovelace", email, password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    expect(r.headers.get("content-type")).toMatch(/^application\/json/);
    expect(Object.keys(r.body).sort()).toEqual(["token", "user"]);

    const { token, user } = r.body;
    expect(typeof token).toBe("string");
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(Object.keys(user).sort()).toEqual(
      [
        "id",
        "name",
        "email",
        "emailVerified",
        "image",
        "username",
        "displayUsername",
        "role",
        "banned",
        "banReason",
        "banExpires",
        "twoFactorEnabled",
        "createdAt",
        "updatedAt",
      ].sort(),
    );
    expect(user.id).toMatch(UUID);
    expect(user.name).toBe("Ada Lovelace");
    expect(user.email).toBe(email.toLowerCase());
    expect(user.email).not.toBe(email); // the input really had upper-case letters
    expect(user.emailVerified).toBe(false);
    expect(user.image).toBeNull();
    expect(user.username).toBeNull();
    expect(user.displayUsername).toBeNull();
    expect(user.role).toBe("user");
    expect(user.banned).toBe(false);
    expect(user.banReason).toBeNull();
    expect(user.banExpires).toBeNull();
    expect(user.createdAt).toMatch(ISO);
    expect(user.updatedAt).toMatch(ISO);
    // The injected clock stamps the record.
    expect(user.createdAt).toBe(before);

    expect(r.headers.get("set-auth-token")).toBe(token);
    const cookie = sessionCookieAttributes(r.headers);
    expect(cookie).not.toBeNull();
    expect(cookie!.value).toBe(token);
    expect(cookie!.attrs.has("httponly")).toBe(true);
    expect(cookie!.attrs.get("samesite")?.toLowerCase()).toBe("lax");
    expect(cookie!.attrs.get("path")).toBe("/");
    expect(cookie!.attrs.get("max-age")).toBe(String(7 * 24 * 3600));
    expect(cookie!.attrs.has("secure")).toBe(false); // public URL is http

    // The token is a live session for this user, by bearer and by cookie.
    const byBearer = await get(`${server.auth}/get-session`, { bearer: token });
    expect(byBearer.status).toBe(200);
    expect(byBearer.body.user).toEqual(user);
    const byCookie = await get(`${server.auth}/get-session`, { cookie: cookieFrom(r.headers)! });
    expect(byCookie.body.user.id).toBe(user.id);
  });

  it("stores image when given", async () => {
    const r = await signUp({ name: "Img", email: uniqueEmail(), password: PASSWORD, image: "https://cdn.example.test/a.png" });
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.image).toBe("https://cdn.example.test/a.png");
  });

  it("accepts application/x-www-form-urlencoded, with rememberMe=false as a string", async () => {
    const email = uniqueEmail("form");
    const r = await request("POST", `${server.auth}/sign-up/email`, form({ name: "Form User", email, password: PASSWORD, rememberMe: "false" }));
    expect(r.status, r.text).toBe(200);
    expect(r.body.user.email).toBe(email);
    expect(r.body.user.name).toBe("Form User");
    const cookie = sessionCookieAttributes(r.headers);
    expect(cookie?.value).toBe(r.body.token);
    expect(cookie!.attrs.has("max-age")).toBe(false);
    expect(cookie!.attrs.has("expires")).toBe(false);
    // Short session: 1 day.
    const s = await get(`${server.auth}/get-session`, { bearer: r.body.token });
    const lifetime = Date.parse(s.body.session.expiresAt) - server.clock.now().getTime();
    expect(lifetime).toBe(24 * 3600 * 1000);
  });

  it("accepts form-encoded rememberMe=true as a string (cookie with Max-Age)", async () => {
    const r = await request("POST", `${server.auth}/sign-up/email`, form({ name: "F", email: uniqueEmail("form"), password: PASSWORD, rememberMe: "true" }));
    expect(r.status, r.text).toBe(200);
    expect(sessionCookieAttributes(r.headers)!.attrs.get("max-age")).toBe(String(7 * 24 * 3600));
  });

  it("rememberMe: false (JSON boolean) gives a cookie without Max-Age and a 1-day session", async () => {
    const r = await signUp({ name: "Short", email: uniqueEmail("short"), password: PASSWORD, rememberMe: false });
    expect(r.status, r.text).toBe(200);
    const cookie = sessionCookieAttributes(r.headers);
    expect(cookie?.value).toBe(r.body.token);
    expect(cookie!.attrs.has("max-age")).toBe(false);
    expect(cookie!.attrs.has("httponly")).toBe(true);
    expect(r.headers.get("set-auth-token")).toBe(r.body.token);
    const s = await get(`${server.auth}/get-session`, { bearer: r.body.token });
    expect(Date.parse(s.body.session.expiresAt) - server.clock.now().getTime()).toBe(24 * 3600 * 1000);
  });

  it("accepts a password of exactly 128 characters and of exactly the minimum length", async () => {
    const long = await signUp({ name: "L", email: uniqueEmail(), password: "a".repeat(128) });
    expect(long.status, long.text).toBe(200);
    const min = await signUp({ name: "M", email: uniqueEmail(), password: "12345678" });
    expect(min.status, min.text).toBe(200);
  });
});

describe("POST /sign-up/email: validation", () => {
  for (const field of ["name", "email", "password"] as const) {
    it(`400 VALIDATION_ERROR naming the field when ${field} is missing`, async () => {
      const body: Record<string, string> = { name: "N", email: uniqueEmail(), password: PASSWORD };
      delete body[field];
      const r = await signUp(body);
      expectError(r, 400, "VALIDATION_ERROR");
      expect(r.body.message).toContain(field);
      expect(Array.isArray(r.body.issues)).toBe(true);
      expect(r.body.issues.map((i: { path: string }) => i.path)).toContain(field);
      for (const issue of r.body.issues) expect(typeof issue.message).toBe("string");
    });
  }

  it("400 VALIDATION_ERROR naming every bad field at once", async () => {
    const r = await signUp({});
    expectError(r, 400, "VALIDATION_ERROR");
    const paths = r.body.issues.map((i: { path: string }) => i.path);
    expect(paths).toEqual(expect.arrayContaining(["name", "email", "password"]));
  });

  it("400 VALIDATION_ERROR for wrong types", async () => {
    const r = await signUp({ name: "N", email: uniqueEmail(), password: 12345678 });
    expectError(r, 400, "VALIDATION_ERROR");
    expect(r.body.message).toContain("password");
  });

  for (const bad of ["not-an-email", "a@", "@example.test", "two@@example.test", "spaces in@example.test"]) {
    it(`400 INVALID_EMAIL for ${JSON.stringify(bad)}`, async () => {
      const r = await signUp({ name: "N", email: bad, password: PASSWORD });
      expectError(r, 400, "INVALID_EMAIL");
    });
  }

  it("400 PASSWORD_TOO_SHORT below the default minimum of 8", async () => {
    const r = await signUp({ name: "N", email: uniqueEmail(), password: "1234567" });
    expectError(r, 400, "PASSWORD_TOO_SHORT");
  });

  it("400 PASSWORD_TOO_LONG above 128 characters", async () => {
    const r = await signUp({ name: "N", email: uniqueEmail(), password: "a".repeat(129) });
    expectError(r, 400, "PASSWORD_TOO_LONG");
    const r2 = await signUp({ name: "N", email: uniqueEmail(), password: "a".repeat(1000) });
    expectError(r2, 400, "PASSWORD_TOO_LONG");
  });

  it("a rejected sign-up creates nothing (the email stays free)", async () => {
    const email = uniqueEmail("rejected");
    expectError(await signUp({ name: "N", email, password: "short" }), 400, "PASSWORD_TOO_SHORT");
    const ok = await signUp({ name: "N", email, password: PASSWORD });
    expect(ok.status, ok.text).toBe(200);
  });

  it("400 INVALID_JSON for a malformed JSON body", async () => {
    const r = await request("POST", `${server.auth}/sign-up/email`, { raw: "{not json", headers: { "content-type": "application/json" } });
    expectError(r, 400, "INVALID_JSON");
  });

  it("415 UNSUPPORTED_MEDIA_TYPE for text/plain", async () => {
    const r = await request("POST", `${server.auth}/sign-up/email`, {
      raw: JSON.stringify({ name: "N", email: uniqueEmail(), password: PASSWORD }),
      headers: { "content-type": "text/plain" },
    });
    expectError(r, 415, "UNSUPPORTED_MEDIA_TYPE");
  });

  it("403 INVALID_CALLBACK_URL for a callbackURL on an untrusted origin", async () => {
    const email = uniqueEmail();
    const r = await signUp({ name: "N", email, password: PASSWORD, callbackURL: "https://evil.example/welcome" });
    expectError(r, 403, "INVALID_CALLBACK_URL");
    // Nothing was created.
    expect((await signUp({ name: "N", email, password: PASSWORD, callbackURL: "/welcome" })).status).toBe(200);
  });
});

describe("POST /sign-up/email: duplicates", () => {
  it("409 USER_ALREADY_EXISTS for a taken email, also in another case", async () => {
    const email = uniqueEmail("dup");
    expect((await signUp({ name: "First", email, password: PASSWORD })).status).toBe(200);
    const again = await signUp({ name: "Second", email, password: "another-password" });
    expectError(again, 409, "USER_ALREADY_EXISTS");
    const upper = await signUp({ name: "Third", email: email.toUpperCase(), password: PASSWORD });
    expectError(upper, 409, "USER_ALREADY_EXISTS");
    const padded = await signUp({ name: "Fourth", email: `  ${email.replace(/^./, (c) => c.toUpperCase())} `, password: PASSWORD });
    expectError(padded, 409, "USER_ALREADY_EXISTS");
    expect(again.headers.getSetCookie()).toEqual([]);
    expect(again.headers.get("set-auth-token")).toBeNull();

    // The original account is untouched: its password still works, the new one does not.
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(User, { email })).toBe(1);
    expect((await em.findOneOrFail(User, { email })).name).toBe("First");
    expect((await post(`${server.auth}/sign-in/email`, { email, password: PASSWORD })).status).toBe(200);
    expect((await post(`${server.auth}/sign-in/email`, { email, password: "another-password" })).status).toBe(401);
  });

  it("concurrent sign-ups with the same email: exactly one 200, the rest 409, never 500", async () => {
    const email = uniqueEmail("race");
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, i) => signUp({ name: `Racer ${i}`, email, password: `password-${i}-xyz` })),
    );
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses, replies.map((r) => r.text).join("\n")).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    for (const r of replies.filter((x) => x.status === 409)) expect(r.body.code).toBe("USER_ALREADY_EXISTS");

    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(User, { email })).toBe(1);
    const winnerIndex = replies.findIndex((r) => r.status === 200);
    const winner = replies[winnerIndex]!;
    expect((await em.findOneOrFail(User, { email })).id).toBe(winner.body.user.id);
    // Only the winner's password signs in.
    const signIn = await post(`${server.auth}/sign-in/email`, { email, password: `password-${winnerIndex}-xyz` });
    expect(signIn.status, signIn.text).toBe(200);
    expect(signIn.body.user.id).toBe(winner.body.user.id);
    const loser = (winnerIndex + 1) % 8;
    expect((await post(`${server.auth}/sign-in/email`, { email, password: `password-${loser}-xyz` })).status).toBe(401);
  });

  it("concurrent sign-ups with the same email in different cases: exactly one wins", async () => {
    const email = uniqueEmail("racecase");
    const variants = [email, email.toUpperCase(), email.replace(/^r/, "R"), email.replace("example", "EXAMPLE")];
    const replies = await Promise.all(variants.map((e) => signUp({ name: "R", email: e, password: PASSWORD })));
    const statuses = replies.map((r) => r.status).sort();
    expect(statuses, replies.map((r) => r.text).join("\n")).toEqual([200, 409, 409, 409]);
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(User, { email })).toBe(1);
  });
});

describe("POST /sign-up/email: configuration", () => {
  describe("passwordMinLength: 12", () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ emailAndPassword: { passwordMinLength: 12 } });
    });
    afterAll(async () => {
      await s?.close();
    });

    it("400 PASSWORD_TOO_SHORT under the configured minimum, 200 at it", async () => {
      expectError(await signUp({ name: "N", email: uniqueEmail(), password: "password123" }, s), 400, "PASSWORD_TOO_SHORT");
      const ok = await signUp({ name: "N", email: uniqueEmail(), password: "password1234" }, s);
      expect(ok.status, ok.text).toBe(200);
    });
  });

  describe("enableSignup: false", () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ emailAndPassword: { enableSignup: false } });
    });
    afterAll(async () => {
      await s?.close();
    });

    it("403 EMAIL_PASSWORD_SIGN_UP_DISABLED and no user is created", async () => {
      const email = uniqueEmail("disabled");
      const r = await signUp({ name: "N", email, password: PASSWORD }, s);
      expectError(r, 403, "EMAIL_PASSWORD_SIGN_UP_DISABLED");
      expect(r.headers.getSetCookie()).toEqual([]);
      const em = s.portcullis.app.orm.em.fork();
      expect(await em.count(User, {})).toBe(0);
    });
  });

  describe("requireEmailVerification: true", () => {
    let s: TestServer;
    beforeAll(async () => {
      s = await startTestServer({ emailAndPassword: { requireEmailVerification: true } });
    });
    afterAll(async () => {
      await s?.close();
    });

    it("creates the user but answers token: null with no cookie and no set-auth-token", async () => {
      const email = uniqueEmail("verify");
      const r = await signUp({ name: "V", email, password: PASSWORD }, s);
      expect(r.status, r.text).toBe(200);
      expect(Object.keys(r.body).sort()).toEqual(["token", "user"]);
      expect(r.body.token).toBeNull();
      expect(r.body.user.email).toBe(email);
      expect(r.body.user.emailVerified).toBe(false);
      expect(r.headers.getSetCookie()).toEqual([]);
      expect(r.headers.get("set-auth-token")).toBeNull();
      const em = s.portcullis.app.orm.em.fork();
      expect(await em.count(User, { email })).toBe(1);
    });

    it("a taken email still answers 409 USER_ALREADY_EXISTS", async () => {
      const email = uniqueEmail("verifydup");
      expect((await signUp({ name: "V", email, password: PASSWORD }, s)).status).toBe(200);
      expectError(await signUp({ name: "V2", email, password: PASSWORD }, s), 409, "USER_ALREADY_EXISTS");
      expectError(await signUp({ name: "V3", email: email.toUpperCase(), password: PASSWORD }, s), 409, "USER_ALREADY_EXISTS");
    });
  });
});

describe("tRPC signUp.email at /api/trpc", () => {
  const trpc = (input: unknown) => post(`${server.url}/api/trpc/signUp.email`, input);

  it("signs up with plain JSON input, same output shape, cookie and set-auth-token", async () => {
    const email = uniqueEmail("trpc");
    const r = await trpc({ name: "T", email, password: PASSWORD });
    expect(r.status, r.text).toBe(200);
    const data = r.body.result.data;
    expect(Object.keys(data).sort()).toEqual(["token", "user"]);
    expect(data.user.email).toBe(email);
    expect(data.user.id).toMatch(UUID);
    expect(data.user.createdAt).toMatch(ISO);
    expect(r.headers.get("set-auth-token")).toBe(data.token);
    expect(cookieFrom(r.headers)).toBe(`${COOKIE}=${data.token}`);
  });

  it("a taken email is HTTP 409 with error.data.authCode USER_ALREADY_EXISTS", async () => {
    const email = uniqueEmail("trpcdup");
    expect((await trpc({ name: "T", email, password: PASSWORD })).status).toBe(200);
    const r = await trpc({ name: "T", email: email.toUpperCase(), password: PASSWORD });
    expect(r.status, r.text).toBe(409);
    expect(r.body.error.data.authCode).toBe("USER_ALREADY_EXISTS");
    expect(r.body.error.data.httpStatus).toBe(409);
    expect(r.body.error.data.code).toBe("CONFLICT");
    expect(r.body.error.message).toBe("User already exists. Use another email.");
    expect(r.text).not.toContain("stack");
  });

  it("a missing field is HTTP 400 with authCode VALIDATION_ERROR and issues", async () => {
    const r = await trpc({ name: "T", password: PASSWORD });
    expect(r.status, r.text).toBe(400);
    expect(r.body.error.data.authCode).toBe("VALIDATION_ERROR");
    expect(r.body.error.data.issues.map((i: { path: string }) => i.path)).toContain("email");
  });
});
