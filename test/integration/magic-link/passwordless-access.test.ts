import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { adminPost, bootstrapAdmin, signUp } from "../../harness/admin-helpers.ts";
import { request, TEST_ORIGIN, uniqueEmail, type RequestOptions } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { mailHook } from "../../harness/smtp.ts";

/**
 * docs/passwordless.md "Impersonation" and docs/machine-access.md "API keys": a session an admin
 * holds as someone else, or an API key's principal, can neither ask for a magic link or a code nor
 * use one, on every passwordless route that asks for or uses a proof (one guard: the sign-in
 * builder, src/trpc/init.ts). A refusal sends no mail and spends nothing: the link and the code
 * still sign in afterwards.
 */
let server: TestServer;
const hook = mailHook();
const { mails } = hook;

beforeAll(async () => {
  server = await startTestServer({ email: { send: hook.send } });
});
afterAll(async () => {
  await server?.close();
});

const lastMail = (to: string, kind: string) => hook.last(server, to, kind);

/** Every passwordless route that asks for a link or a code, or uses one, with a body that would otherwise work. */
function routes(email: string, token: string, code: string): Array<[string, string, RequestOptions]> {
  const json = (body: unknown): RequestOptions => ({ json: body });
  const form = new URLSearchParams({ token }).toString();
  return [
    ["POST", "/sign-in/magic-link", json({ email })],
    ["GET", `/magic-link/verify?token=${token}`, {}],
    ["GET", `/magic-link/verify?token=${token}`, { headers: { accept: "text/html" } }],
    ["POST", "/magic-link/verify", { raw: form, headers: { "content-type": "application/x-www-form-urlencoded", origin: TEST_ORIGIN } }],
    ["POST", "/email-otp/send-verification-otp", json({ email, type: "sign-in" })],
    ["POST", "/sign-in/email-otp", json({ email, otp: code })],
    ["POST", "/email-otp/request-password-reset", json({ email })],
    ["POST", "/forget-password/email-otp", json({ email })],
    ["POST", "/email-otp/reset-password", json({ email, otp: code, password: "a brand new password" })],
  ];
}

describe("passwordless: no link or code for another sign-in from a borrowed session", () => {
  it("an API key's principal (403 API_KEY_SESSION_NOT_ALLOWED) and an impersonation (403 IMPERSONATION_NOT_ALLOWED) are refused on every route; nothing is mailed or spent", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server, { email: uniqueEmail("pl-borrowed") });
    const key = (await request("POST", `${server.auth}/api-key/create`, { json: {}, bearer: target.token })).body.key as string;
    const imp = (await adminPost(server, "impersonate-user", { userId: target.id }, admin.token)).headers.get("set-auth-token")!;
    expect(key).toBeTruthy();
    expect(imp).toBeTruthy();

    expect((await request("POST", `${server.auth}/sign-in/magic-link`, { json: { email: target.email } })).status).toBe(200);
    const token = new URL((await lastMail(target.email, "magicLink")).url!).searchParams.get("token")!;
    expect((await request("POST", `${server.auth}/email-otp/send-verification-otp`, { json: { email: target.email, type: "sign-in" } })).status).toBe(200);
    const code = (await lastMail(target.email, "emailOtp")).code!;
    const mailed = mails.length;

    const borrowed: Array<[string, (o: RequestOptions) => RequestOptions]> = [
      ["API_KEY_SESSION_NOT_ALLOWED", (o) => ({ ...o, headers: { ...o.headers, "x-api-key": key } })],
      ["IMPERSONATION_NOT_ALLOWED", (o) => ({ ...o, bearer: imp })],
    ];
    for (const [refusal, as] of borrowed) {
      for (const [method, path, opts] of routes(target.email, token, code)) {
        const res = await request(method, `${server.auth}${path}`, as(opts));
        const where = `${refusal} ${method} ${path} ${opts.headers?.accept ?? ""}`;
        if (opts.headers?.accept === "text/html") {
          // A browser gets the refusal on the error page (the route's errorPage), not the confirm page.
          expect(res.status, where).toBe(302);
          expect(res.headers.get("location"), where).toBe(`${TEST_ORIGIN}/api/auth/error?error=${refusal}`);
        } else {
          expect(res.status, where).toBe(403);
          expect(res.body?.code, where).toBe(refusal);
        }
      }
    }
    await server.portcullis.app.mailer.settle();
    expect(mails).toHaveLength(mailed);

    // Nothing was spent: the link signs in, and so does the code (four refused tries at it would have used up its three).
    const byLink = await request("GET", `${server.auth}/magic-link/verify?token=${token}`);
    expect(byLink.status, byLink.text).toBe(200);
    expect(byLink.body.user.id).toBe(target.id);
    const byCode = await request("POST", `${server.auth}/sign-in/email-otp`, { json: { email: target.email, otp: code } });
    expect(byCode.status, byCode.text).toBe(200);
    expect(byCode.body.user.id).toBe(target.id);
  });
});
