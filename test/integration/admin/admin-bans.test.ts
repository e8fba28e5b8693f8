import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { authErrorCode, createPortcullisClient } from "portcullis/client";
import { DAY, HOUR, MINUTE } from "../../harness/clock.ts";
import { get, post } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { adminGet, adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

const MESSAGE = "Your account is suspended: write to support@example.test";

let server: TestServer;
let admin: SignedInUser;

beforeAll(async () => {
  server = await startTestServer({ admin: { bannedUserMessage: MESSAGE } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
});

let n = 0;
const username = () => `banned_${Date.now().toString(36)}_${++n}`;

async function expectBanned(user: SignedInUser, name: string) {
  const byEmail = await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD });
  expectError(byEmail, 403, "BANNED_USER");
  expect(byEmail.body.message).toBe(MESSAGE);
  expect(byEmail.headers.get("set-cookie")).toBeNull();
  const byUsername = await post(`${server.auth}/sign-in/username`, { username: name, password: PASSWORD });
  expectError(byUsername, 403, "BANNED_USER");
  expect(byUsername.body.message).toBe(MESSAGE);
}

describe("bans", () => {
  it("ban-user with an expiry ends every session and blocks email and username sign-in until it lifts itself", async () => {
    const name = username();
    const user = await signUp(server, { username: name });
    const second = await signIn(server, user.email);
    // Cached by a first read (the SQLite default caches sessions in-process).
    expect((await get(`${server.auth}/get-session`, { bearer: second.token })).body.user.id).toBe(user.id);

    const res = await adminPost(server, "ban-user", { userId: user.id, banReason: "spam", banExpiresIn: 3600 }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ id: user.id, banned: true, banReason: "spam", banExpires: new Date(server.clock.now().getTime() + HOUR).toISOString() });
    for (const s of [user, second]) {
      expect((await get(`${server.auth}/get-session`, { bearer: s.token })).body).toBeNull();
      expect((await get(`${server.auth}/get-session`, { cookie: s.cookie })).body).toBeNull();
    }
    expect((await adminPost(server, "list-user-sessions", { userId: user.id }, admin.token)).body.sessions).toEqual([]);

    await expectBanned(user, name);
    // The ban is told only after the password check: a wrong password stays a plain 401.
    expectError(await post(`${server.auth}/sign-in/email`, { email: user.email, password: "wrong password!" }), 401, "INVALID_EMAIL_OR_PASSWORD");
    expectError(await post(`${server.auth}/sign-in/username`, { username: name, password: "wrong password!" }), 401, "INVALID_USERNAME_OR_PASSWORD");
    // Through tRPC too.
    const client = createPortcullisClient({ url: server.url });
    await expect(client.signIn.email.mutate({ email: user.email, password: PASSWORD })).rejects.toSatisfy((err) => authErrorCode(err) === "BANNED_USER");

    server.clock.advance(59 * MINUTE);
    await expectBanned(user, name);

    server.clock.advance(2 * MINUTE);
    const back = await post(`${server.auth}/sign-in/username`, { username: name, password: PASSWORD });
    expect(back.status, back.text).toBe(200);
    expect(back.body.user).toMatchObject({ banned: false, banReason: null, banExpires: null });
    const stored = await adminGet(server, "get-user", { id: user.id }, admin.token);
    expect(stored.body).toMatchObject({ banned: false, banReason: null, banExpires: null });
    await signIn(server, user.email);
  });

  it("a ban without expiry holds until unban-user", async () => {
    const name = username();
    const user = await signUp(server, { username: name });
    const res = await adminPost(server, "ban-user", { userId: user.id }, admin.token);
    expect(res.body.user).toMatchObject({ banned: true, banReason: "No reason", banExpires: null });
    server.clock.advance(400 * DAY);
    await expectBanned(user, name);
    // The admin's own session expired meanwhile (7 days).
    expectError(await adminPost(server, "unban-user", { userId: user.id }, admin.token), 401, "UNAUTHORIZED");
    admin = await signIn(server, admin.email);

    const unban = await adminPost(server, "unban-user", { userId: user.id }, admin.token);
    expect(unban.status, unban.text).toBe(200);
    expect(unban.body.user).toMatchObject({ id: user.id, banned: false, banReason: null, banExpires: null });
    await signIn(server, user.email);
  });

  it("update-user with banned: true also ends the sessions", async () => {
    const user = await signUp(server);
    const res = await adminPost(server, "update-user", { userId: user.id, data: { banned: true, banReason: "via update" } }, admin.token);
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({ banned: true, banReason: "via update" });
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body).toBeNull();
    expectError(await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD }), 403, "BANNED_USER");
  });

  it("errors: nobody bans themselves (400), unknown users (404), bad expiry (400)", async () => {
    expectError(await adminPost(server, "ban-user", { userId: admin.id }, admin.token), 400, "YOU_CANNOT_BAN_YOURSELF");
    expect((await get(`${server.auth}/get-session`, { bearer: admin.token })).body.user.banned).toBe(false);
    const ghost = "00000000-0000-4000-8000-000000000000";
    expectError(await adminPost(server, "ban-user", { userId: ghost }, admin.token), 404, "USER_NOT_FOUND");
    expectError(await adminPost(server, "unban-user", { userId: ghost }, admin.token), 404, "USER_NOT_FOUND");
    const user = await signUp(server);
    expectError(await adminPost(server, "ban-user", { userId: user.id, banExpiresIn: -5 }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminPost(server, "ban-user", { userId: user.id, banExpiresIn: "soon" }, admin.token), 400, "VALIDATION_ERROR");
    expectError(await adminPost(server, "unban-user", {}, admin.token), 400, "VALIDATION_ERROR");
    // None of the failures banned anyone.
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body.user.banned).toBe(false);
  });
});
