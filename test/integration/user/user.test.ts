/**
 * docs/wire-contract.md §4: POST /update-user and POST /change-password through the REST bridge.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SECOND } from "../../harness/clock.ts";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

const PASSWORD = "password123";
const NEW_PASSWORD = "correct horse battery staple";
const COOKIE = "portcullis.session_token";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server.close();
});

const url = (path: string) => `${server.auth}${path}`;
const cookieOf = (token: string) => `${COOKIE}=${token}`;

let usernameCounter = 0;
/** A unique, valid username (letters, digits, `_`), at most 30 characters. */
function uniqueUsername(prefix = "u"): string {
  usernameCounter += 1;
  return `${prefix}_${Date.now().toString(36)}${usernameCounter}`;
}

interface Signed {
  email: string;
  token: string;
  userId: string;
}

async function signUp(extra: Record<string, unknown> = {}): Promise<Signed> {
  const email = uniqueEmail("user");
  const r = await post(url("/sign-up/email"), { name: "Original Name", email, password: PASSWORD, ...extra });
  expect(r.status, r.text).toBe(200);
  return { email, token: r.body.token, userId: r.body.user.id };
}

async function signIn(email: string, password = PASSWORD, headers: Record<string, string> = {}): Promise<Reply> {
  return post(url("/sign-in/email"), { email, password }, { headers });
}

async function userOf(token: string) {
  const r = await get(url("/get-session"), { bearer: token });
  expect(r.status).toBe(200);
  expect(r.body, "session should be alive").not.toBeNull();
  return r.body.user;
}

async function expectDead(token: string) {
  const r = await get(url("/get-session"), { bearer: token });
  expect(r.text, `session ${token.slice(0, 6)}… should be dead`).toBe("null");
}

function expectError(r: Reply, status: number, code: string) {
  expect(r.status, r.text).toBe(status);
  expect(r.body).toMatchObject({ code, message: expect.any(String) });
  expect(Object.keys(r.body).filter((k) => k !== "issues").sort()).toEqual(["code", "message"]);
}

describe("POST /update-user", () => {
  it("updates name and image; get-session shows the change", async () => {
    const { token, userId, email } = await signUp();
    const before = await userOf(token);
    server.clock.advance(5 * SECOND);
    const nowIso = server.clock.now().toISOString();

    const r = await post(url("/update-user"), { name: "New Name", image: "https://img.example.test/a.png" }, { cookie: cookieOf(token) });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ status: true });

    const after = await userOf(token);
    expect(after).toMatchObject({ id: userId, email, name: "New Name", image: "https://img.example.test/a.png" });
    expect(after.updatedAt).toBe(nowIso);
    expect(after.createdAt).toBe(before.createdAt);
    // Untouched fields stay as they were.
    expect(after.username).toBe(before.username);
    expect(after.emailVerified).toBe(false);
    expect(after.role).toBe("user");
  });

  it("image null clears the image; a name-only update leaves the image alone", async () => {
    const { token } = await signUp({ image: "https://img.example.test/start.png" });
    expect((await userOf(token)).image).toBe("https://img.example.test/start.png");

    await post(url("/update-user"), { name: "Only Name" }, { bearer: token });
    expect(await userOf(token)).toMatchObject({ name: "Only Name", image: "https://img.example.test/start.png" });

    const r = await post(url("/update-user"), { image: null }, { bearer: token });
    expect(r.body).toEqual({ status: true });
    expect(await userOf(token)).toMatchObject({ name: "Only Name", image: null });
  });

  it("sets a username: stored lower-cased, displayUsername keeps the case given, sign-in by username works", async () => {
    const { token, userId } = await signUp();
    const raw = uniqueUsername("Mixed_Case");
    const r = await post(url("/update-user"), { username: raw }, { bearer: token });
    expect(r.status, r.text).toBe(200);
    expect(r.body).toEqual({ status: true });
    expect(await userOf(token)).toMatchObject({ username: raw.toLowerCase(), displayUsername: raw });

    const byName = await post(url("/sign-in/username"), { username: raw.toUpperCase(), password: PASSWORD });
    expect(byName.status, byName.text).toBe(200);
    expect(byName.body.user.id).toBe(userId);
    const available = await post(url("/is-username-available"), { username: raw });
    expect(available.body).toEqual({ available: false });
  });

  it("username with an explicit displayUsername keeps both; displayUsername alone changes only it", async () => {
    const { token } = await signUp();
    const name = uniqueUsername("bob.smith");
    await post(url("/update-user"), { username: name, displayUsername: "Bob Smith" }, { bearer: token });
    expect(await userOf(token)).toMatchObject({ username: name.toLowerCase(), displayUsername: "Bob Smith" });

    const r = await post(url("/update-user"), { displayUsername: "Robert S." }, { bearer: token });
    expect(r.body).toEqual({ status: true });
    expect(await userOf(token)).toMatchObject({ username: name.toLowerCase(), displayUsername: "Robert S." });
  });

  it("changing the username frees the old one", async () => {
    const first = uniqueUsername("first");
    const { token } = await signUp({ username: first });
    const second = uniqueUsername("second");
    expect((await post(url("/update-user"), { username: second }, { bearer: token })).status).toBe(200);
    expect((await post(url("/is-username-available"), { username: first })).body).toEqual({ available: true });
    const other = await signUp();
    expect((await post(url("/update-user"), { username: first }, { bearer: other.token })).status).toBe(200);
    expect((await userOf(other.token)).username).toBe(first.toLowerCase());
  });

  it("setting one's own current username again is not a conflict", async () => {
    const name = uniqueUsername("same");
    const { token } = await signUp({ username: name });
    const r = await post(url("/update-user"), { username: name.toUpperCase() }, { bearer: token });
    expect(r.status, r.text).toBe(200);
    expect(await userOf(token)).toMatchObject({ username: name.toLowerCase(), displayUsername: name.toUpperCase() });
  });

  it("409 USERNAME_IS_ALREADY_TAKEN when another user has it (any case); nothing changes", async () => {
    const taken = uniqueUsername("taken");
    await signUp({ username: taken });
    const own = uniqueUsername("own");
    const { token } = await signUp({ username: own });

    for (const attempt of [taken, taken.toUpperCase()]) {
      const r = await post(url("/update-user"), { username: attempt, name: "Should Not Stick" }, { bearer: token });
      expectError(r, 409, "USERNAME_IS_ALREADY_TAKEN");
    }
    expect(await userOf(token)).toMatchObject({ username: own.toLowerCase(), displayUsername: own, name: "Original Name" });
  });

  it("400 USERNAME_TOO_SHORT / USERNAME_TOO_LONG / INVALID_USERNAME; nothing changes", async () => {
    const own = uniqueUsername("keep");
    const { token } = await signUp({ username: own });
    expectError(await post(url("/update-user"), { username: "ab" }, { bearer: token }), 400, "USERNAME_TOO_SHORT");
    expectError(await post(url("/update-user"), { username: "a".repeat(31) }, { bearer: token }), 400, "USERNAME_TOO_LONG");
    expectError(await post(url("/update-user"), { username: "bad name!" }, { bearer: token }), 400, "INVALID_USERNAME");
    expect((await userOf(token)).username).toBe(own.toLowerCase());
  });

  it("400 EMAIL_CAN_NOT_BE_UPDATED when the body has an email key; nothing changes", async () => {
    const { token, email } = await signUp();
    for (const body of [{ email: uniqueEmail("new") }, { email }, { email: uniqueEmail("new"), name: "Should Not Stick" }]) {
      expectError(await post(url("/update-user"), body, { bearer: token }), 400, "EMAIL_CAN_NOT_BE_UPDATED");
    }
    expect(await userOf(token)).toMatchObject({ email, name: "Original Name" });
  });

  it("401 UNAUTHORIZED without a session", async () => {
    expectError(await post(url("/update-user"), { name: "x" }), 401, "UNAUTHORIZED");
    expectError(await post(url("/update-user"), { name: "x" }, { bearer: "A".repeat(43) }), 401, "UNAUTHORIZED");
  });
});

describe("POST /change-password", () => {
  it("400 INVALID_PASSWORD for a wrong current password; the password is unchanged", async () => {
    const { token, email } = await signUp();
    const r = await post(url("/change-password"), { currentPassword: "not-my-password", newPassword: NEW_PASSWORD }, { bearer: token });
    expectError(r, 400, "INVALID_PASSWORD");
    expect((await signIn(email)).status).toBe(200);
    expect((await signIn(email, NEW_PASSWORD)).status).toBe(401);
  });

  it("400 PASSWORD_TOO_SHORT / PASSWORD_TOO_LONG for the new password; the password is unchanged", async () => {
    const { token, email } = await signUp();
    const short = await post(url("/change-password"), { currentPassword: PASSWORD, newPassword: "short" }, { bearer: token });
    expectError(short, 400, "PASSWORD_TOO_SHORT");
    const long = await post(url("/change-password"), { currentPassword: PASSWORD, newPassword: "x".repeat(129) }, { bearer: token });
    expectError(long, 400, "PASSWORD_TOO_LONG");
    expect((await signIn(email)).status).toBe(200);
  });

  it("success: token null, old password stops working, new one works, existing sessions stay valid", async () => {
    const { token, email, userId } = await signUp();
    const other = (await signIn(email)).body.token as string;

    const r = await post(url("/change-password"), { currentPassword: PASSWORD, newPassword: NEW_PASSWORD }, { cookie: cookieOf(token) });
    expect(r.status, r.text).toBe(200);
    expect(Object.keys(r.body).sort()).toEqual(["token", "user"]);
    expect(r.body.token).toBeNull();
    expect(r.body.user).toMatchObject({ id: userId, email });
    expect(r.text).not.toMatch(/password/i);
    expect(r.headers.getSetCookie()).toEqual([]);
    expect(r.headers.get("set-auth-token")).toBeNull();

    const old = await signIn(email);
    expectError(old, 401, "INVALID_EMAIL_OR_PASSWORD");
    const fresh = await signIn(email, NEW_PASSWORD);
    expect(fresh.status, fresh.text).toBe(200);
    expect(fresh.body.user.id).toBe(userId);

    expect((await userOf(token)).id).toBe(userId);
    expect((await userOf(other)).id).toBe(userId);
  });

  it("revokeOtherSessions: a new token and cookie; every older session, the caller's included, is dead", async () => {
    const { token, email, userId } = await signUp();
    const second = (await signIn(email)).body.token as string;
    const third = (await signIn(email)).body.token as string;
    const bystander = await signUp();
    for (const t of [token, second, third]) expect((await userOf(t)).id).toBe(userId);

    const r = await post(
      url("/change-password"),
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeOtherSessions: true },
      { cookie: cookieOf(token), headers: { "user-agent": "PasswordChanger/1.0" } },
    );
    expect(r.status, r.text).toBe(200);
    const newToken = r.body.token as string;
    expect(typeof newToken).toBe("string");
    expect(newToken.length).toBeGreaterThanOrEqual(20);
    expect([token, second, third]).not.toContain(newToken);
    expect(r.body.user).toMatchObject({ id: userId, email });
    expect(r.headers.getSetCookie()).toEqual([`${COOKIE}=${newToken}; Max-Age=604800; Path=/; HttpOnly; SameSite=Lax`]);
    expect(r.headers.get("set-auth-token")).toBe(newToken);

    for (const t of [token, second, third]) await expectDead(t);
    const now = await get(url("/get-session"), { cookie: cookieOf(newToken) });
    expect(now.body?.user.id).toBe(userId);
    expect(now.body.session).toMatchObject({ userAgent: "PasswordChanger/1.0", ipAddress: "127.0.0.1" });
    const list = await get(url("/list-sessions"), { bearer: newToken });
    expect(list.body).toHaveLength(1);
    expect(list.body[0].id).toBe(now.body.session.id);

    expect((await userOf(bystander.token)).id).toBe(bystander.userId);
    expect((await signIn(email)).status).toBe(401);
    expect((await signIn(email, NEW_PASSWORD)).status).toBe(200);
  });

  it("revokeOtherSessions false behaves like the default", async () => {
    const { token, email } = await signUp();
    const r = await post(
      url("/change-password"),
      { currentPassword: PASSWORD, newPassword: NEW_PASSWORD, revokeOtherSessions: false },
      { bearer: token },
    );
    expect(r.status, r.text).toBe(200);
    expect(r.body.token).toBeNull();
    expect((await userOf(token)).email).toBe(email);
  });

  it("401 UNAUTHORIZED without a session", async () => {
    const body = { currentPassword: PASSWORD, newPassword: NEW_PASSWORD };
    expectError(await post(url("/change-password"), body), 401, "UNAUTHORIZED");
    expectError(await post(url("/change-password"), body, { cookie: `${COOKIE}=${"Z".repeat(43)}` }), 401, "UNAUTHORIZED");
  });
});
