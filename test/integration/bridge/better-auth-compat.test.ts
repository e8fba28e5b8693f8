/**
 * The official better-auth client SDK, unchanged, against our REST bridge (docs/wire-contract.md: "its
 * official client SDK works against us unchanged"). Node has no cookie jar, so the session
 * travels the way better-auth documents for non-browser clients: read `set-auth-token`, send
 * it back as `Authorization: Bearer`.
 */
import { createAuthClient } from "better-auth/client";
import { usernameClient } from "better-auth/client/plugins";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer();
});
afterAll(async () => {
  await server?.close();
});

const PASSWORD = "correct horse battery";

interface Sent {
  method: string;
  url: string;
  authorization: string | null;
  status: number;
}

/** A better-auth client with its own token slot and a log of what went over the wire. */
function makeClient() {
  const state: { token: string | null; sent: Sent[] } = { token: null, sent: [] };
  const client = createAuthClient({
    baseURL: server.url,
    basePath: "/api/auth",
    plugins: [usernameClient()],
    fetchOptions: {
      auth: { type: "Bearer", token: () => state.token ?? undefined },
      onSuccess(ctx) {
        const token = ctx.response.headers.get("set-auth-token");
        if (token) state.token = token;
      },
      onResponse(ctx) {
        state.sent.push({
          method: ctx.request.method ?? "GET",
          url: String(ctx.request.url),
          authorization: new Headers(ctx.request.headers).get("authorization"),
          status: ctx.response.status,
        });
      },
    },
  });
  return { client, state };
}

describe("better-auth/client SDK compatibility", () => {
  it("signs up, reads the session, lists sessions, updates the user and signs out", async () => {
    const { client, state } = makeClient();
    const email = uniqueEmail("sdk");

    const up = await client.signUp.email({ name: "SDK User", email, password: PASSWORD, username: "SDK_User" });
    expect(up.error).toBeNull();
    expect(up.data).not.toBeNull();
    expect(up.data!.user).toMatchObject({ name: "SDK User", email, emailVerified: false, username: "sdk_user", displayUsername: "SDK_User" });
    expect(typeof up.data!.token).toBe("string");
    // The SDK revives ISO dates as Date objects.
    expect(up.data!.user.createdAt).toBeInstanceOf(Date);
    // The token the SDK captured from `set-auth-token` is the one in the body.
    expect(state.token).toBe(up.data!.token);
    expect(state.sent.at(-1)).toMatchObject({ method: "POST", url: `${server.auth}/sign-up/email`, status: 200 });

    const session = await client.getSession();
    expect(session.error).toBeNull();
    expect(session.data).not.toBeNull();
    expect(session.data!.user.id).toBe(up.data!.user.id);
    expect(session.data!.user.email).toBe(email);
    expect(session.data!.session.userId).toBe(up.data!.user.id);
    expect(session.data!.session.expiresAt).toBeInstanceOf(Date);
    expect(session.data!.session.expiresAt.getTime()).toBeGreaterThan(Date.now());
    expect(state.sent.at(-1)).toMatchObject({ method: "GET", authorization: `Bearer ${up.data!.token}`, status: 200 });

    const sessions = await client.listSessions();
    expect(sessions.error).toBeNull();
    expect(sessions.data!.map((s) => s.id)).toEqual([session.data!.session.id]);

    const updated = await client.updateUser({ name: "Renamed By SDK" });
    expect(updated.error).toBeNull();
    expect(updated.data).toEqual({ status: true });
    expect((await client.getSession()).data!.user.name).toBe("Renamed By SDK");

    const out = await client.signOut();
    expect(out.error).toBeNull();
    expect(out.data).toEqual({ success: true });
    expect(state.sent.at(-1)).toMatchObject({ method: "POST", url: `${server.auth}/sign-out`, status: 200 });

    // The old token is dead: getSession answers data null (not an error).
    const gone = await client.getSession();
    expect(gone.error).toBeNull();
    expect(gone.data).toBeNull();
    const denied = await client.listSessions();
    expect(denied.data).toBeNull();
    expect(denied.error).toMatchObject({ status: 401, code: "UNAUTHORIZED" });
  });

  it("signs in by email and by username", async () => {
    const { client: registrar } = makeClient();
    const email = uniqueEmail("sdk-in");
    const up = await registrar.signUp.email({ name: "Sign In", email, password: PASSWORD, username: "sdk.signin" });
    expect(up.error).toBeNull();

    const { client, state } = makeClient();
    expect((await client.getSession()).data).toBeNull();

    const byEmail = await client.signIn.email({ email: email.toUpperCase(), password: PASSWORD });
    expect(byEmail.error).toBeNull();
    expect(byEmail.data).toMatchObject({ redirect: false, user: { id: up.data!.user.id, email } });
    expect(byEmail.data!.token).toBe(state.token);
    expect(byEmail.data!.token).not.toBe(up.data!.token);
    expect((await client.getSession()).data!.user.id).toBe(up.data!.user.id);

    const { client: other, state: otherState } = makeClient();
    const byUsername = await other.signIn.username({ username: "SDK.SignIn", password: PASSWORD });
    expect(byUsername.error).toBeNull();
    expect(byUsername.data).toMatchObject({ token: expect.any(String), user: { id: up.data!.user.id, username: "sdk.signin" } });
    expect(otherState.token).toBe(byUsername.data!.token);
    const otherSession = await other.getSession();
    expect(otherSession.data!.user.id).toBe(up.data!.user.id);

    // Two sessions for the user now (email + username sign-in) plus the sign-up one.
    const listed = await other.listSessions();
    expect(listed.data).toHaveLength(3);
    expect(listed.data!.map((s) => s.id)).toContain(otherSession.data!.session.id);

    // revokeOtherSessions leaves only the caller's.
    const revoked = await other.revokeOtherSessions();
    expect(revoked.error).toBeNull();
    expect(revoked.data).toEqual({ status: true });
    expect((await client.getSession()).data).toBeNull();
    expect((await other.listSessions()).data!.map((s) => s.id)).toEqual([otherSession.data!.session.id]);
  });

  it("exposes errors as the SDK shapes them", async () => {
    const { client: registrar } = makeClient();
    const email = uniqueEmail("sdk-err");
    expect((await registrar.signUp.email({ name: "Err", email, password: PASSWORD, username: "sdk_err" })).error).toBeNull();

    const { client, state } = makeClient();
    const wrong = await client.signIn.email({ email, password: "not the password" });
    expect(wrong.data).toBeNull();
    expect(wrong.error).toMatchObject({ status: 401, code: "INVALID_EMAIL_OR_PASSWORD", message: "Invalid email or password" });
    expect(state.token).toBeNull();

    const unknown = await client.signIn.email({ email: uniqueEmail("nobody"), password: PASSWORD });
    expect(unknown.error).toMatchObject({ status: 401, code: "INVALID_EMAIL_OR_PASSWORD", message: "Invalid email or password" });

    const wrongUsername = await client.signIn.username({ username: "sdk_err", password: "not the password" });
    expect(wrongUsername.error).toMatchObject({ status: 401, code: "INVALID_USERNAME_OR_PASSWORD", message: "Invalid username or password" });

    const duplicate = await client.signUp.email({ name: "Again", email, password: PASSWORD });
    expect(duplicate.data).toBeNull();
    expect(duplicate.error).toMatchObject({ status: 409, code: "USER_ALREADY_EXISTS", message: "User already exists. Use another email." });

    const takenUsername = await client.signUp.email({ name: "Taken", email: uniqueEmail("taken"), password: PASSWORD, username: "SDK_ERR" });
    expect(takenUsername.error).toMatchObject({ status: 409, code: "USERNAME_IS_ALREADY_TAKEN" });

    const short = await client.signUp.email({ name: "Short", email: uniqueEmail("short"), password: "short" });
    expect(short.error).toMatchObject({ status: 400, code: "PASSWORD_TOO_SHORT" });

    const badEmail = await client.signUp.email({ name: "Bad", email: "not-an-email", password: PASSWORD });
    expect(badEmail.error).toMatchObject({ status: 400, code: "INVALID_EMAIL" });
    expect(state.token).toBeNull();
  });

  it("answers the username plugin's availability check", async () => {
    const { client } = makeClient();
    const up = await client.signUp.email({ name: "Avail", email: uniqueEmail("avail"), password: PASSWORD, username: "avail_me" });
    expect(up.error).toBeNull();
    const taken = await client.isUsernameAvailable({ username: "Avail_Me" });
    expect(taken.error).toBeNull();
    expect(taken.data).toEqual({ available: false });
    const free = await client.isUsernameAvailable({ username: "nobody_has_this" });
    expect(free.data).toEqual({ available: true });
  });

  it("changes the password through the SDK and signs in with the new one", async () => {
    const { client, state } = makeClient();
    const email = uniqueEmail("sdk-pw");
    expect((await client.signUp.email({ name: "Pw", email, password: PASSWORD })).error).toBeNull();
    const firstToken = state.token;

    const wrongCurrent = await client.changePassword({ currentPassword: "nope nope nope", newPassword: "new password 123" });
    expect(wrongCurrent.error).toMatchObject({ status: 400, code: "INVALID_PASSWORD" });

    const changed = await client.changePassword({ currentPassword: PASSWORD, newPassword: "new password 123", revokeOtherSessions: true });
    expect(changed.error).toBeNull();
    expect(changed.data!.user.email).toBe(email);
    // A fresh session was issued and captured from `set-auth-token`.
    expect(typeof changed.data!.token).toBe("string");
    expect(state.token).toBe(changed.data!.token);
    expect(state.token).not.toBe(firstToken);
    expect((await client.getSession()).data!.user.email).toBe(email);

    const { client: fresh } = makeClient();
    expect((await fresh.signIn.email({ email, password: PASSWORD })).error).toMatchObject({ status: 401 });
    expect((await fresh.signIn.email({ email, password: "new password 123" })).error).toBeNull();
  });
});
