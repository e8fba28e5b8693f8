import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import ts from "typescript";
import { afterAll, beforeAll, describe, expect, expectTypeOf, it } from "vitest";
import {
  authErrorCode,
  createPortcullisClient,
  isPortcullisClientError,
  TRPCClientError,
  type AuthErrorCode,
  type PortcullisClientError,
  type PublicUser,
  type RouterInputs,
} from "portcullis/client";
import { cookieFrom, TEST_ORIGIN, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ user: { changeEmail: { enabled: true }, deleteUser: { enabled: true } } });
});
afterAll(async () => {
  await server?.close();
});

/** A fetch that records what the client sends and what it gets back. */
function recordingFetch() {
  const calls: { url: string; method: string; headers: Headers; status: number; responseHeaders: Headers }[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    calls.push({
      url: String(input instanceof Request ? input.url : input),
      method: init?.method ?? "GET",
      headers: new Headers(init?.headers),
      status: res.status,
      responseHeaders: res.headers,
    });
    return res;
  };
  return { calls, fetch: fetchImpl };
}

/** Awaits a call that must fail and returns its typed error. */
async function failure(promise: Promise<unknown>): Promise<PortcullisClientError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TRPCClientError);
    if (!isPortcullisClientError(err)) throw err;
    return err;
  }
  throw new Error("expected the call to fail");
}

const PASSWORD = "correct horse battery";

describe("typed client (portcullis/client)", () => {
  it("signs up, reads the typed session, lists sessions, updates the user, signs out", async () => {
    const anon = createPortcullisClient({ url: server.url });
    const email = uniqueEmail("client");
    const up = await anon.signUp.email.mutate({ name: "Client User", email, password: PASSWORD });
    expectTypeOf(up.token).toEqualTypeOf<string | null>();
    expectTypeOf(up.user).toEqualTypeOf<PublicUser>();
    expect(typeof up.token).toBe("string");
    expect(up.user).toMatchObject({ name: "Client User", email, emailVerified: false, role: "user", username: null });
    const token = up.token!;

    const recorder = recordingFetch();
    const client = createPortcullisClient({ url: `${server.url}/`, token, fetch: recorder.fetch });

    const result = await client.getSession.query();
    expectTypeOf(result?.user.email).toEqualTypeOf<string | undefined>();
    expectTypeOf(result?.user.emailVerified).toEqualTypeOf<boolean | undefined>();
    expectTypeOf(result?.session.expiresAt).toEqualTypeOf<string | undefined>();
    expect(result).not.toBeNull();
    expect(result!.user.id).toBe(up.user.id);
    expect(result!.user.email).toBe(email);
    expect(result!.session.userId).toBe(up.user.id);
    // No transformer: dates arrive as ISO strings.
    expect(new Date(result!.session.expiresAt).toISOString()).toBe(result!.session.expiresAt);

    // One plain HTTP request per call (httpLink, no batching), token as a bearer header.
    expect(recorder.calls).toHaveLength(1);
    const call = recorder.calls[0]!;
    expect(call.method).toBe("GET");
    expect(new URL(call.url).pathname).toBe("/api/trpc/getSession");
    expect(new URL(call.url).searchParams.has("batch")).toBe(false);
    expect(call.headers.get("authorization")).toBe(`Bearer ${token}`);
    expect(call.status).toBe(200);

    const sessions = await client.listSessions.query();
    expectTypeOf(sessions).items.toHaveProperty("expiresAt").toEqualTypeOf<string>();
    expect(sessions.map((s) => s.id)).toEqual([result!.session.id]);
    // docs/wire-contract.md §2: the caller's own session carries the token it presented.
    expect(sessions[0]!.token).toBe(token);

    const updated = await client.updateUser.mutate({ name: "Renamed", username: "Client_Name" });
    expectTypeOf(updated).toEqualTypeOf<{ status: true }>();
    expect(updated).toEqual({ status: true });
    const after = await client.getSession.query();
    expect(after!.user).toMatchObject({ name: "Renamed", username: "client_name", displayUsername: "Client_Name" });

    const out = await client.signOut.mutate();
    expectTypeOf(out).toEqualTypeOf<{ success: true }>();
    expect(out).toEqual({ success: true });
    expect(await client.getSession.query()).toBeNull();

    const unauthorized = await failure(client.listSessions.query());
    expect(unauthorized.data?.authCode).toBe("UNAUTHORIZED");
    expect(unauthorized.data?.httpStatus).toBe(401);
    expect(recorder.calls.at(-1)!.status).toBe(401);
  });

  it("exposes account self-service: verifyPassword, changeEmail, deleteUser", async () => {
    const email = uniqueEmail("self");
    const anon = createPortcullisClient({ url: server.url });
    const up = await anon.signUp.email.mutate({ name: "Self", email, password: "correct horse battery" });
    const client = createPortcullisClient({ url: server.url, token: up.token! });
    expect(await client.verifyPassword.mutate({ password: "correct horse battery" })).toEqual({ status: true });
    expect(authErrorCode(await client.verifyPassword.mutate({ password: "wrong wrong" }).catch((e: unknown) => e))).toBe("INVALID_PASSWORD");
    const newEmail = uniqueEmail("self-new");
    expect(await client.changeEmail.mutate({ newEmail })).toEqual({ status: true });
    expect((await client.getSession.query())!.user.email).toBe(newEmail);
    const deleted = await client.deleteUser.mutate({});
    expectTypeOf(deleted.message).toEqualTypeOf<"User deleted" | "Verification email sent">();
    expect(deleted).toEqual({ success: true, message: "User deleted" });
    expect(await client.getSession.query()).toBeNull();
  });

  it("types inputs: signIn.email requires password", async () => {
    expectTypeOf<RouterInputs["signIn"]["email"]>().toHaveProperty("password").toEqualTypeOf<string>();
    const client = createPortcullisClient({ url: server.url });
    expectTypeOf(client.signIn.email.mutate).parameter(0).toExtend<{ email: string; password: string }>();
    expectTypeOf<{ email: string }>().not.toExtend<RouterInputs["signIn"]["email"]>();

    const email = uniqueEmail("typed");
    await client.signUp.email.mutate({ name: "Typed", email, password: PASSWORD });

    // The type system rejects a missing password, and so does the server.
    // @ts-expect-error password is required
    const missing = await failure(client.signIn.email.mutate({ email }));
    expect(missing.data?.authCode).toBe("VALIDATION_ERROR");
    expect(missing.data?.httpStatus).toBe(400);
    expect(missing.data?.issues?.map((i) => i.path)).toContain("password");
    expect(missing.message).toContain("password");

    const answer = await client.signIn.email.mutate({ email, password: PASSWORD });
    // A user with two-factor on gets { twoFactorRedirect } instead: the type makes the caller check.
    // @ts-expect-error url exists only on the signed-in branch
    void answer.url;
    if ("twoFactorRedirect" in answer) throw new Error("no two-factor here");
    const signedIn = answer;
    expectTypeOf(signedIn.url).toEqualTypeOf<string | null>();
    expectTypeOf(signedIn.redirect).toEqualTypeOf<boolean>();
    expect(signedIn).toMatchObject({ redirect: false, url: null, user: { email } });
    expect(typeof signedIn.token).toBe("string");
  });

  it("surfaces contract errors with authCode and httpStatus", async () => {
    const client = createPortcullisClient({ url: server.url });
    const email = uniqueEmail("dup");
    await client.signUp.email.mutate({ name: "First", email, password: PASSWORD });

    const err = await failure(client.signUp.email.mutate({ name: "Second", email: email.toUpperCase(), password: PASSWORD }));
    expectTypeOf(err.data?.authCode).toEqualTypeOf<AuthErrorCode | undefined>();
    expectTypeOf(err.data?.httpStatus).toEqualTypeOf<number | undefined>();
    expect(err).toBeInstanceOf(TRPCClientError);
    expect(err.data?.authCode).toBe("USER_ALREADY_EXISTS");
    expect(err.data?.httpStatus).toBe(409);
    expect(err.data?.code).toBe("CONFLICT");
    expect(err.message).toBe("User already exists. Use another email.");
    expect(authErrorCode(err)).toBe("USER_ALREADY_EXISTS");
    expect(authErrorCode(new Error("not ours"))).toBeUndefined();

    const wrong = await failure(client.signIn.email.mutate({ email, password: "wrong password!" }));
    expect(wrong.data?.authCode).toBe("INVALID_EMAIL_OR_PASSWORD");
    expect(wrong.data?.httpStatus).toBe(401);

    const unknownUser = await failure(client.signIn.username.mutate({ username: "nobody_here", password: PASSWORD }));
    expect(unknownUser.data?.authCode).toBe("INVALID_USERNAME_OR_PASSWORD");
    expect(unknownUser.data?.httpStatus).toBe(401);
  });

  it("reads the token from a function before every request", async () => {
    const anon = createPortcullisClient({ url: server.url });
    const a = await anon.signUp.email.mutate({ name: "A", email: uniqueEmail("fa"), password: PASSWORD });
    const b = await anon.signUp.email.mutate({ name: "B", email: uniqueEmail("fb"), password: PASSWORD });
    let current: string | null = null;
    const client = createPortcullisClient({ url: server.url, token: () => current });

    expect(await client.getSession.query()).toBeNull();
    current = a.token;
    expect((await client.getSession.query())?.user.id).toBe(a.user.id);
    current = b.token;
    expect((await client.getSession.query())?.user.id).toBe(b.user.id);
    current = "not-a-real-token";
    expect(await client.getSession.query()).toBeNull();
  });

  it("forwards a cookie, with an Origin for the CSRF check", async () => {
    const recorder = recordingFetch();
    const anon = createPortcullisClient({ url: server.url, fetch: recorder.fetch });
    const email = uniqueEmail("cookie");
    const up = await anon.signUp.email.mutate({ name: "Cookie", email, password: PASSWORD });
    const signUpReply = recorder.calls.at(-1)!;
    expect(signUpReply.method).toBe("POST");
    expect(signUpReply.responseHeaders.get("set-auth-token")).toBe(up.token);
    const cookie = cookieFrom(signUpReply.responseHeaders);
    expect(cookie).toBe(`portcullis.session_token=${up.token}`);

    // Queries are GETs: no Origin needed.
    const noOrigin = createPortcullisClient({ url: server.url, cookie: `theme=dark; ${cookie}` });
    expect((await noOrigin.getSession.query())?.user.email).toBe(email);
    // A cookie-carrying mutation without an Origin is refused.
    const refused = await failure(noOrigin.updateUser.mutate({ name: "Nope" }));
    expect(refused.data?.authCode).toBe("MISSING_OR_NULL_ORIGIN");
    expect(refused.data?.httpStatus).toBe(403);
    const foreign = createPortcullisClient({ url: server.url, cookie: cookie!, origin: "https://evil.example" });
    const invalid = await failure(foreign.updateUser.mutate({ name: "Nope" }));
    expect(invalid.data?.authCode).toBe("INVALID_ORIGIN");

    const withOrigin = createPortcullisClient({ url: server.url, cookie: () => cookie, origin: TEST_ORIGIN });
    expect(await withOrigin.updateUser.mutate({ name: "Via Cookie" })).toEqual({ status: true });
    expect((await withOrigin.getSession.query())?.user.name).toBe("Via Cookie");
    expect(await withOrigin.signOut.mutate()).toEqual({ success: true });
    expect(await withOrigin.getSession.query()).toBeNull();
  });

  it("sends extra headers, with token/cookie/origin taking precedence", async () => {
    const recorder = recordingFetch();
    const client = createPortcullisClient({
      url: server.url,
      token: "tok",
      headers: async () => ({ "X-Trace": "abc", Authorization: "Basic ignored" }),
      fetch: recorder.fetch,
    });
    expect(await client.ok.query()).toEqual({ ok: true });
    const sent = recorder.calls[0]!.headers;
    expect(sent.get("x-trace")).toBe("abc");
    expect(sent.get("authorization")).toBe("Bearer tok");
  });

  it("imports server types only: the client modules emit no import of server code", () => {
    // src/client (portcullis/client) and the light client's sources it shares (packages/client/src)
    const roots = { server: join(import.meta.dirname, "../../../src/client"), light: join(import.meta.dirname, "../../../packages/client/src") };
    const SHARED_CORE = "../../packages/client/src/core.ts";
    const seen: string[] = [];
    for (const [kind, dir] of Object.entries(roots)) {
      const files = readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts") && !f.endsWith(".d.ts"));
      expect(files).toContain("index.ts");
      for (const file of files) {
        const source = readFileSync(join(dir, file), "utf8");
        const js = ts.transpileModule(source, {
          compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2023, verbatimModuleSyntax: true, removeComments: true },
        }).outputText;
        const specifiers = [...js.matchAll(/\b(?:import|export)\s[^'"]*?from\s*["']([^"']+)["']|\bimport\s*\(\s*["']([^"']+)["']/g)].map(
          (m) => m[1] ?? m[2],
        );
        seen.push(...specifiers.map((spec) => `${kind}/${file} → ${spec}`));
        for (const spec of specifiers) {
          // Runtime imports may only be @trpc/client, sibling client modules, or (portcullis/client) the light client's runtime.
          const allowed = spec === "@trpc/client" || (spec!.startsWith("./") && !spec!.includes("..")) || (kind === "server" && spec === SHARED_CORE);
          expect(allowed, `${kind}: ${file} imports ${spec}`).toBe(true);
        }
      }
    }
    expect(seen).toContain("light/core.ts → @trpc/client");
    expect(seen).toContain(`server/index.ts → ${SHARED_CORE}`);
  });
});

describe("two-factor and passkeys through the typed client", () => {
  it("twoFactor.* and passkey.* are typed procedures; the sign-in answer is a union the caller narrows", async () => {
    const { totpCode } = await import("../../../src/modules/two-factor/totp.ts");
    const email = uniqueEmail("client-2fa");
    const anon = createPortcullisClient({ url: server.url });
    const { token } = await anon.signUp.email.mutate({ name: "Two", email, password: PASSWORD });
    const client = createPortcullisClient({ url: server.url, token: token! });
    // @ts-expect-error password is required
    void (() => client.twoFactor.enable.mutate({}));
    const { totpURI, backupCodes } = await client.twoFactor.enable.mutate({ password: PASSWORD });
    expectTypeOf(backupCodes).toEqualTypeOf<string[]>();
    const secret = new URL(totpURI).searchParams.get("secret")!;
    server.clock.advance(30_000);
    const verified = await client.twoFactor.verifyTotp.mutate({ code: totpCode(secret, server.clock.now().getTime()) });
    expect(verified.user.twoFactorEnabled).toBe(true);
    expect(await client.passkey.listUserPasskeys.query()).toEqual([]);

    const answer = await anon.signIn.email.mutate({ email, password: PASSWORD });
    if (!("twoFactorRedirect" in answer)) throw new Error("expected the second step");
    expectTypeOf(answer.twoFactorMethods).toEqualTypeOf<string[]>();
    expect(answer).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp", "otp"] });
  });
});
