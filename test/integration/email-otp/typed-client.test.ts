import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import { authErrorCode, createPortcullisClient, type RouterInputs } from "portcullis/client";
import { uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { mailHook } from "../../harness/smtp.ts";

/** The passwordless procedures through the typed tRPC client (portcullis/client): typed inputs, the sign-in union, contract codes. */
let server: TestServer;
const hook = mailHook();

beforeAll(async () => {
  server = await startTestServer({ email: { send: hook.send } });
});
afterAll(async () => {
  await server?.close();
});

const mailTo = (to: string, kind: string) => hook.last(server, to, kind);

describe("passwordless through the typed client", () => {
  it("emailOtp.* and signIn.emailOtp: a code signs in; the answer is a union the caller narrows", async () => {
    const client = createPortcullisClient({ url: server.url });
    const email = uniqueEmail("typed-otp");
    expectTypeOf<RouterInputs["emailOtp"]["sendVerificationOtp"]["type"]>().toEqualTypeOf<"sign-in" | "email-verification" | "forget-password">();
    expect(await client.emailOtp.sendVerificationOtp.mutate({ email, type: "sign-in" })).toEqual({ success: true });
    const { code } = await mailTo(email, "emailOtp");
    const wrong = await client.signIn.emailOtp.mutate({ email, otp: "000000" === code ? "111111" : "000000" }).catch((err: unknown) => err);
    expect(authErrorCode(wrong)).toBe("INVALID_OTP");
    const answer = await client.signIn.emailOtp.mutate({ email, otp: code!, name: "Typed" });
    if ("twoFactorRedirect" in answer) throw new Error("no two-factor here");
    expect(answer.user).toMatchObject({ email, name: "Typed", emailVerified: true });
    const signedIn = createPortcullisClient({ url: server.url, token: answer.token! });
    expect((await signedIn.getSession.query())?.user.email).toBe(email);
  });

  it("signIn.magicLink and magicLink.verify: the link's token signs in over tRPC (JSON, no page)", async () => {
    const client = createPortcullisClient({ url: server.url });
    const email = uniqueEmail("typed-ml");
    expect(await client.signIn.magicLink.mutate({ email })).toEqual({ status: true });
    const token = new URL((await mailTo(email, "magicLink")).url!).searchParams.get("token")!;
    const answer = await client.magicLink.verify.mutate({ token });
    if (!("session" in answer)) throw new Error("expected a session");
    expect(answer.user.email).toBe(email);
    expect(answer.session.token).toBe(answer.token);
    expect(authErrorCode(await client.magicLink.verify.mutate({ token }).catch((err: unknown) => err))).toBe("INVALID_TOKEN");
  });
});
