import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { User, Verification } from "../../../src/db/entities/index.ts";
import { sha256 } from "../../../src/crypto/tokens.ts";
import { DAY, HOUR } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signIn, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * Links mailed before a change of password or address (docs/security.md "Stale links"): the
 * password changed (reset, change-password, admin set-user-password) → every reset link goes;
 * the address changed (change-email, admin update-user) → every link mailed to the old address
 * goes (reset, verification, change-email, delete-account). A reset link also carries the address
 * it was mailed to and is refused once the user's address differs.
 */

let sink: SmtpSink;
let server: TestServer;
let root: SignedInUser;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, user: { deleteUser: { enabled: true }, changeEmail: { enabled: true } } });
  root = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

const mailTo = async (email: string, subject: string) => sink.waitFor((m) => m.to.includes(email) && m.subject === subject);

/** A reset link mailed to the user's current address: its token. */
async function resetToken(email: string): Promise<string> {
  const before = sink.to(email).length;
  expect((await post(`${server.auth}/request-password-reset`, { email, redirectTo: "/reset" })).status).toBe(200);
  await sink.waitFor(() => sink.to(email).length > before);
  return new URL(linkFrom(sink.to(email)[before]!, "/reset-password/")).pathname.split("/").pop()!;
}

const reset = (token: string, newPassword: string) => post(`${server.auth}/reset-password`, { token, newPassword });
const canSignIn = async (email: string, password: string) => (await post(`${server.auth}/sign-in/email`, { email, password })).status === 200;

async function userRow(id: string) {
  return server.portcullis.app.orm.em.fork().findOne(User, { id }, { disableIdentityMap: true });
}

describe(`stale links after an admin change (${testDialect})`, () => {
  it("set-user-password: a reset link mailed before it no longer undoes the admin's password", async () => {
    const user = await signUp(server);
    const token = await resetToken(user.email);
    const set = await adminPost(server, "set-user-password", { userId: user.id, newPassword: "the admin's new password" }, root.token);
    expect(set.status, set.text).toBe(200);
    expectError(await reset(token, "the old mailbox's password"), 400, "INVALID_TOKEN");
    expect(await canSignIn(user.email, "the admin's new password")).toBe(true);
    expect(await canSignIn(user.email, "the old mailbox's password")).toBe(false);
    // The user's sessions stay, as before (better-auth's set-user-password keeps them).
    expect((await get(`${server.auth}/get-session`, { bearer: user.token })).body?.user.id).toBe(user.id);
  });

  it("update-user {email}: a reset link mailed to the old address cannot take over the moved account", async () => {
    const user = await signUp(server);
    const token = await resetToken(user.email);
    const moved = uniqueEmail("moved");
    const update = await adminPost(server, "update-user", { userId: user.id, data: { email: moved } }, root.token);
    expect(update.status, update.text).toBe(200);
    expect(update.body.email).toBe(moved);
    // The link's landing page refuses it too.
    const landing = await get(`${server.auth}/reset-password/${token}?callbackURL=%2Freset`);
    expect(landing.headers.get("location")).toBe("http://127.0.0.1:3000/reset?error=INVALID_TOKEN");
    expectError(await reset(token, "the old mailbox's password"), 400, "INVALID_TOKEN");
    expect(await canSignIn(moved, PASSWORD)).toBe(true);
    expect(await canSignIn(moved, "the old mailbox's password")).toBe(false);
  });

  it("update-user {email}: the delete-account and change-email links mailed to the old address die with it", async () => {
    const user = await signUp(server);
    const second = await signIn(server, user.email);
    // A verified address: change-email then mails its approval link to the current (old) address.
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: user.id }, { emailVerified: true });
    server.portcullis.app.sessionCache.evictUser(user.id);
    server.clock.advance(DAY + HOUR); // a stale session: delete-user mails a link
    expect((await post(`${server.auth}/delete-user`, {}, { bearer: user.token })).body.message).toBe("Verification email sent");
    const deleteLink = onServer(linkFrom(await mailTo(user.email, "Confirm the deletion of your account"), "/delete-user/callback"), server.url);
    expect((await post(`${server.auth}/change-email`, { newEmail: uniqueEmail("wanted") }, { bearer: user.token })).status).toBe(200);
    const confirmMail = await sink.waitFor((m) => m.to.includes(user.email) && m.text.includes("/verify-email"));
    const confirmLink = onServer(linkFrom(confirmMail, "/verify-email"), server.url);
    const links = await server.portcullis.app.orm.em.fork().count(Verification, { value: { $like: `{"userId":"${user.id}"%` } });
    expect(links).toBe(2);

    const moved = uniqueEmail("moved");
    expect((await adminPost(server, "update-user", { userId: user.id, data: { email: moved } }, root.token)).status).toBe(200);
    expect(await server.portcullis.app.orm.em.fork().count(Verification, { value: { $like: `{"userId":"${user.id}"%` } })).toBe(0);
    expectError(await get(deleteLink, { bearer: second.token }), 400, "INVALID_TOKEN");
    expect(await userRow(user.id)).not.toBeNull();
    expectError(await get(confirmLink), 400, "INVALID_TOKEN");
    expect((await userRow(user.id))?.email).toBe(moved);
  });

  it("update-user without an address change keeps the user's links", async () => {
    const user = await signUp(server);
    const token = await resetToken(user.email);
    expect((await adminPost(server, "update-user", { userId: user.id, data: { name: "Renamed" } }, root.token)).status).toBe(200);
    // Naming the same address again is no move either.
    expect((await adminPost(server, "update-user", { userId: user.id, data: { email: user.email.toUpperCase() } }, root.token)).status).toBe(200);
    expect((await reset(token, "a password of my own")).status).toBe(200);
  });
});

describe(`reset links are bound to the address they were mailed to (${testDialect})`, () => {
  it("the token's value holds the address; once the user's address differs the link is refused", async () => {
    const user = await signUp(server);
    const token = await resetToken(user.email);
    const row = await server.portcullis.app.orm.em.fork().findOneOrFail(Verification, { identifier: sha256(token) });
    expect(JSON.parse(row.value)).toEqual({ userId: user.id, email: user.email });
    // The address moves by a way that knows nothing of links (an operator's UPDATE, an import).
    const moved = uniqueEmail("elsewhere");
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: user.id }, { email: moved });
    const landing = await get(`${server.auth}/reset-password/${token}`);
    expectError(landing, 400, "INVALID_TOKEN");
    expectError(await reset(token, "the old mailbox's password"), 400, "INVALID_TOKEN");
    expect(await canSignIn(moved, PASSWORD)).toBe(true);
  });

  it("a link without an address (imported from better-auth) stays bound to its user only", async () => {
    const user = await signUp(server);
    const token = await resetToken(user.email);
    await server.portcullis.app.orm.em.fork().nativeUpdate(Verification, { identifier: sha256(token) }, { value: JSON.stringify({ userId: user.id }) });
    expect((await reset(token, "a password of my own")).status).toBe(200);
    expect(await canSignIn(user.email, "a password of my own")).toBe(true);
  });
});
