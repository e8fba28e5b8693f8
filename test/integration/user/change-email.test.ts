import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testDialect } from "../../harness/database.ts";
import { get, post, uniqueEmail, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";
import { adminPost, bootstrapAdmin, expectError, PASSWORD, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * docs/wire-contract.md §9: POST /change-email. An unverified address moves at once (and
 * the new one gets a verification link); a verified one is approved from the old address first,
 * then proven at the new one. A taken address answers like a free one and gets no mail.
 */

let sink: SmtpSink;
let server: TestServer;
let off: TestServer;
let trpc: string;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, user: { changeEmail: { enabled: true } } });
  off = await startTestServer();
  trpc = `${server.url}/api/trpc`;
});
afterAll(async () => {
  await server?.close();
  await off?.close();
  await sink?.close();
});

const me = async (token: string) => (await get(`${server.auth}/get-session`, { bearer: token })).body?.user;
const changeEmail = (token: string, body: unknown): Promise<Reply> => post(`${server.auth}/change-email`, body, { bearer: token });
const mailTo = async (email: string, count = 1) => {
  await sink.waitFor(() => sink.to(email).length >= count);
  return sink.to(email)[count - 1]!;
};
/** Lets deferred sends finish, so "no mail" is a real observation. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 300));

/** A user whose email is verified (through the mailed verification link). */
async function verifiedUser(): Promise<SignedInUser> {
  const user = await signUp(server);
  expect((await post(`${server.auth}/send-verification-email`, { email: user.email })).status).toBe(200);
  const link = onServer(linkFrom(await mailTo(user.email), "/verify-email"), server.url);
  expect((await get(link)).status).toBe(200);
  expect((await me(user.token)).emailVerified).toBe(true);
  return user;
}

describe(`change-email (${testDialect})`, () => {
  it("is off by default: 400 CHANGE_EMAIL_DISABLED", async () => {
    const user = await signUp(off);
    expectError(await post(`${off.auth}/change-email`, { newEmail: uniqueEmail("new") }, { bearer: user.token }), 400, "CHANGE_EMAIL_DISABLED");
  });

  it("needs a session, a valid address, a new address, and a safe callbackURL", async () => {
    const user = await signUp(server);
    expectError(await post(`${server.auth}/change-email`, { newEmail: uniqueEmail("x") }), 401, "UNAUTHORIZED");
    expectError(await changeEmail(user.token, { newEmail: "not-an-email" }), 400, "VALIDATION_ERROR");
    expectError(await changeEmail(user.token, { newEmail: user.email.toUpperCase() }), 400, "EMAIL_IS_THE_SAME");
    expectError(await changeEmail(user.token, { newEmail: uniqueEmail("x"), callbackURL: "https://evil.example/" }), 403, "INVALID_CALLBACK_URL");
    expect((await me(user.token)).email).toBe(user.email);
  });

  it("unverified: the address moves at once, unverified, and the new address gets a verification link", async () => {
    const user = await signUp(server);
    const newEmail = uniqueEmail("moved");
    const res = await changeEmail(user.token, { newEmail: newEmail.toUpperCase(), callbackURL: "/settings" });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toEqual({ status: true });
    expect(await me(user.token)).toMatchObject({ email: newEmail, emailVerified: false });

    const link = linkFrom(await mailTo(newEmail), "/verify-email");
    expect(new URL(link).searchParams.get("callbackURL")).toBe("/settings");
    const verified = await get(onServer(link, server.url));
    expect(verified.status).toBe(302);
    expect(await me(user.token)).toMatchObject({ email: newEmail, emailVerified: true });
    // Sign-in works with the new address only.
    expect((await post(`${server.auth}/sign-in/email`, { email: newEmail, password: PASSWORD })).status).toBe(200);
    expect((await post(`${server.auth}/sign-in/email`, { email: user.email, password: PASSWORD })).status).toBe(401);
  });

  it("unverified, taken address: the same answer, nothing moves, no mail", async () => {
    const owner = await signUp(server);
    const user = await signUp(server);
    const res = await changeEmail(user.token, { newEmail: owner.email });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: true });
    await settle();
    expect((await me(user.token)).email).toBe(user.email);
    expect(sink.to(owner.email)).toHaveLength(0);
  });

  it("links mailed to the old address die when it moves (reset link)", async () => {
    const user = await signUp(server);
    await post(`${server.auth}/request-password-reset`, { email: user.email, redirectTo: "/reset" });
    const reset = linkFrom(await mailTo(user.email), "/reset-password/");
    const token = new URL(reset).pathname.split("/").pop()!;
    expect((await changeEmail(user.token, { newEmail: uniqueEmail("away") })).status).toBe(200);
    expectError(await post(`${server.auth}/reset-password`, { token, newPassword: "hijacked password" }), 400, "INVALID_TOKEN");
  });

  it("verified: approval from the old address, then proof at the new one; the email moves verified", async () => {
    const user = await verifiedUser();
    const newEmail = uniqueEmail("next");
    const res = await changeEmail(user.token, { newEmail });
    expect(res.body).toEqual({ status: true });
    expect((await me(user.token)).email).toBe(user.email);

    const approval = await mailTo(user.email, 2);
    expect(approval.subject).toBe("Confirm your new email address");
    expect(approval.text).toContain(newEmail);
    await settle();
    expect(sink.to(newEmail)).toHaveLength(0);
    const approve = await get(onServer(linkFrom(approval, "/verify-email"), server.url));
    expect(approve.status, approve.text).toBe(200);
    expect(approve.body).toEqual({ status: true });
    expect((await me(user.token)).email).toBe(user.email);

    const proof = linkFrom(await mailTo(newEmail), "/verify-email");
    const done = await get(onServer(proof, server.url));
    expect(done.status, done.text).toBe(200);
    expect(done.body).toMatchObject({ status: true, user: { email: newEmail, emailVerified: true } });
    expect(await me(user.token)).toMatchObject({ email: newEmail, emailVerified: true });
    // Each link works once.
    expectError(await get(onServer(proof, server.url)), 400, "INVALID_TOKEN");
    expectError(await get(onServer(linkFrom(approval, "/verify-email"), server.url)), 400, "INVALID_TOKEN");
  });

  it("verified, taken address: the same answer, and no mail to anyone", async () => {
    const owner = await signUp(server);
    const user = await verifiedUser();
    expect((await changeEmail(user.token, { newEmail: owner.email })).body).toEqual({ status: true });
    await settle();
    expect(sink.to(user.email)).toHaveLength(1); // the verification mail only
    expect(sink.to(owner.email)).toHaveLength(0);
  });

  it("verified: an address taken between approval and proof is refused; the user keeps the old one", async () => {
    const user = await verifiedUser();
    const newEmail = uniqueEmail("raced");
    await changeEmail(user.token, { newEmail });
    await get(onServer(linkFrom(await mailTo(user.email, 2), "/verify-email"), server.url));
    const proof = linkFrom(await mailTo(newEmail), "/verify-email");
    await signUp(server, { email: newEmail });
    expectError(await get(onServer(proof, server.url)), 400, "INVALID_TOKEN");
    expect((await me(user.token)).email).toBe(user.email);
  });

  it("tRPC changeEmail works the same; an impersonation session gets 403 (REST and tRPC)", async () => {
    const user = await signUp(server);
    const newEmail = uniqueEmail("trpc");
    const viaTrpc = await post(`${trpc}/changeEmail`, { newEmail }, { bearer: user.token });
    expect(viaTrpc.status, viaTrpc.text).toBe(200);
    expect(viaTrpc.body.result.data).toEqual({ status: true });
    expect((await me(user.token)).email).toBe(newEmail);

    const admin = await bootstrapAdmin(server);
    const target = await signUp(server);
    const imp = (await adminPost(server, "impersonate-user", { userId: target.id }, admin.token)).headers.get("set-auth-token")!;
    expectError(await changeEmail(imp, { newEmail: uniqueEmail("imp") }), 403, "IMPERSONATION_NOT_ALLOWED");
    const impTrpc = await post(`${trpc}/changeEmail`, { newEmail: uniqueEmail("imp") }, { bearer: imp });
    expect(impTrpc.status).toBe(403);
    expect(impTrpc.body.error.data.authCode).toBe("IMPERSONATION_NOT_ALLOWED");
    expect((await me(target.token)).email).toBe(target.email);
  });
});
