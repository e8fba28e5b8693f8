import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { routes } from "../../../rest-bridge/routes.ts";
import { User } from "../../../src/db/entities/index.ts";
import { DAY, MINUTE, SECOND } from "../../harness/clock.ts";
import { testDialect } from "../../harness/database.ts";
import { cookieFrom, get, post, request, type Reply } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { SoftAuthenticator } from "../../harness/webauthn.ts";
import { adminPost, bootstrapAdmin, expectError, signUp, type SignedInUser } from "../../harness/admin-helpers.ts";

/**
 * Passkeys (better-auth 1.6's passkey plugin on the wire, docs/wire-contract.md §10), with a software
 * authenticator (test/harness/webauthn.ts) for the ceremonies. The browser side, with Chromium's
 * virtual authenticator, is test/browser/passkey.test.ts.
 */
const CHALLENGE_COOKIE = "portcullis.passkey";

let server: TestServer;
let off: TestServer;
let admin: SignedInUser;

beforeAll(async () => {
  server = await startTestServer();
  off = await startTestServer({ passkey: { enabled: false } });
  admin = await bootstrapAdmin(server);
});
afterAll(async () => {
  await server?.close();
  await off?.close();
});

const origin = () => server.portcullis.app.origin;
const challengeCookie = (res: Reply) => cookieFrom(res.headers, CHALLENGE_COOKIE);

async function registerOptions(user: SignedInUser, query = "") {
  const res = await get(`${server.auth}/passkey/generate-register-options${query}`, { bearer: user.token });
  expect(res.status, res.text).toBe(200);
  return { options: res.body, cookie: challengeCookie(res)! };
}

async function authOptions(bearer?: string) {
  const res = await get(`${server.auth}/passkey/generate-authenticate-options`, bearer ? { bearer } : {});
  expect(res.status, res.text).toBe(200);
  return { options: res.body, cookie: challengeCookie(res)! };
}

const verifyRegistration = (user: SignedInUser, cookie: string | null, response: unknown, name?: string) =>
  post(`${server.auth}/passkey/verify-registration`, { response, ...(name ? { name } : {}) }, { bearer: user.token, ...(cookie ? { cookie } : {}) });

const verifyAuthentication = (cookie: string | null, response: unknown) =>
  post(`${server.auth}/passkey/verify-authentication`, { response }, cookie ? { cookie } : {});

/** A user with one registered passkey. */
async function withPasskey(opts: { signCount?: number | null; name?: string } = {}) {
  const user = await signUp(server);
  const authenticator = new SoftAuthenticator(origin(), { signCount: opts.signCount });
  const { options, cookie } = await registerOptions(user);
  const res = await verifyRegistration(user, cookie, authenticator.register(options), opts.name);
  expect(res.status, res.text).toBe(200);
  return { user, authenticator, passkey: res.body };
}

/** A usernameless sign-in: options without a session, then the assertion. */
async function signInWith(authenticator: SoftAuthenticator) {
  const { options, cookie } = await authOptions();
  return verifyAuthentication(cookie, authenticator.assert(options));
}

async function count(sql: string, params: unknown[]): Promise<number> {
  const conn = server.portcullis.app.orm.em.fork().getConnection();
  return Number((await conn.execute(sql, params))[0].n);
}
const sessionsOf = (userId: string) => count("select count(*) as n from sessions where user_id = ?", [userId]);

describe(`passkey options (${testDialect})`, () => {
  it("registration options: simplewebauthn's JSON with better-auth's choices, and a 5-minute HttpOnly challenge cookie", async () => {
    const user = await signUp(server);
    const res = await get(`${server.auth}/passkey/generate-register-options`, { bearer: user.token });
    expect(res.status, res.text).toBe(200);
    expect(res.body).toMatchObject({
      rp: { name: "Portcullis", id: "127.0.0.1" },
      user: { name: user.email, displayName: user.email },
      attestation: "none",
      excludeCredentials: [],
      authenticatorSelection: { residentKey: "preferred", userVerification: "preferred", requireResidentKey: false },
      timeout: 60000,
    });
    expect(res.body.challenge).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(res.body.user.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(res.body.pubKeyCredParams.map((p: { alg: number }) => p.alg)).toEqual(expect.arrayContaining([-7, -257]));
    const line = res.headers.getSetCookie().find((c) => c.startsWith(`${CHALLENGE_COOKIE}=`))!;
    expect(line).toMatch(/; HttpOnly/);
    expect(line).toMatch(/; SameSite=Lax/);
    expect(line).toMatch(/; Max-Age=300/);
    expect(line).toMatch(/; Path=\//);
    // docs/wire-contract.md §10: the challenge is at rest only as its SHA-256.
    const digest = createHash("sha256").update(res.body.challenge).digest("hex");
    const rows = await server.portcullis.app.orm.em.fork().getConnection().execute("select value from verifications where purpose = 'passkey-challenge'");
    const values = rows.map((r: { value: string }) => r.value);
    expect(values.some((v: string) => v.includes(digest))).toBe(true);
    expect(values.some((v: string) => v.includes(res.body.challenge))).toBe(false);
  });

  it("the query's name and authenticatorAttachment reach the options; a bad attachment is a 400", async () => {
    const user = await signUp(server);
    const { options } = await registerOptions(user, "?name=Work%20laptop&authenticatorAttachment=platform");
    expect(options.user.name).toBe("Work laptop");
    expect(options.authenticatorSelection.authenticatorAttachment).toBe("platform");
    expectError(await get(`${server.auth}/passkey/generate-register-options?authenticatorAttachment=usb`, { bearer: user.token }), 400, "VALIDATION_ERROR");
  });

  it("authentication options: no session, no allowCredentials (usernameless); GET and POST both work", async () => {
    const { options } = await authOptions();
    expect(options).toMatchObject({ rpId: "127.0.0.1", userVerification: "preferred", timeout: 60000 });
    expect(options.allowCredentials).toBeUndefined();
    const viaPost = await post(`${server.auth}/passkey/generate-authenticate-options`, {});
    expect(viaPost.status, viaPost.text).toBe(200);
    expect(challengeCookie(viaPost)).toBeTruthy();
  });

  it("needs a session to register: 401 UNAUTHORIZED", async () => {
    expectError(await get(`${server.auth}/passkey/generate-register-options`), 401, "UNAUTHORIZED");
    expectError(await post(`${server.auth}/passkey/verify-registration`, { response: {} }), 401, "UNAUTHORIZED");
    expectError(await get(`${server.auth}/passkey/list-user-passkeys`), 401, "UNAUTHORIZED");
  });
});

describe(`passkey registration and sign-in (${testDialect})`, () => {
  it("registers, lists, excludes the credential next time, and signs in usernameless with a session like sign-in's", async () => {
    const { user, authenticator, passkey } = await withPasskey({ name: "Phone" });
    expect(passkey).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "Phone",
      publicKey: expect.any(String),
      userId: user.id,
      credentialID: authenticator.id,
      counter: 0,
      deviceType: "singleDevice",
      backedUp: false,
      transports: "internal",
      createdAt: server.clock.now().toISOString(),
      aaguid: "00000000-0000-0000-0000-000000000000",
    });
    expect((await get(`${server.auth}/passkey/list-user-passkeys`, { bearer: user.token })).body).toEqual([passkey]);
    const again = await registerOptions(user);
    expect(again.options.excludeCredentials).toEqual([{ id: authenticator.id, type: "public-key", transports: ["internal"] }]);
    // Signed in, the request options name that user's credentials (better-auth's behaviour).
    expect((await authOptions(user.token)).options.allowCredentials).toEqual([{ id: authenticator.id, type: "public-key", transports: ["internal"] }]);

    const res = await signInWith(authenticator);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toEqual(user.user);
    expect(res.body.session).toMatchObject({ userId: user.id, impersonatedBy: null, token: expect.any(String) });
    expect(res.headers.get("set-auth-token")).toBe(res.body.session.token);
    expect(cookieFrom(res.headers)).toBe(`portcullis.session_token=${res.body.session.token}`);
    expect(res.headers.getSetCookie().find((c) => c.startsWith(`${CHALLENGE_COOKIE}=`))).toMatch(/Max-Age=0/);
    const session = await get(`${server.auth}/get-session`, { bearer: res.body.session.token });
    expect(session.body.user.id).toBe(user.id);
    const [listed] = (await get(`${server.auth}/passkey/list-user-passkeys`, { bearer: user.token })).body;
    expect(listed.counter).toBe(1);
  });

  it("a passkey sign-in never asks for the second factor", async () => {
    const { user, authenticator } = await withPasskey();
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: user.id }, { twoFactorEnabled: true });
    server.portcullis.app.sessionCache.evictUser(user.id);
    const res = await signInWith(authenticator);
    expect(res.status, res.text).toBe(200);
    expect(res.body.twoFactorRedirect).toBeUndefined();
    expect(res.body.session.token).toEqual(expect.any(String));
  });

  it("an authenticator without a counter (always 0) signs in again and again", async () => {
    const { authenticator } = await withPasskey({ signCount: null });
    for (let i = 0; i < 2; i++) expect((await signInWith(authenticator)).status).toBe(200);
  });
});

describe(`passkey challenges (${testDialect})`, () => {
  it("no cookie, or an unknown one: 400 CHALLENGE_NOT_FOUND on both ceremonies", async () => {
    const { user, authenticator } = await withPasskey();
    const { options } = await authOptions();
    expectError(await verifyAuthentication(null, authenticator.assert(options)), 400, "CHALLENGE_NOT_FOUND");
    expectError(await verifyAuthentication(`${CHALLENGE_COOKIE}=${"x".repeat(43)}`, authenticator.assert(options)), 400, "CHALLENGE_NOT_FOUND");
    const reg = await registerOptions(user);
    expectError(await verifyRegistration(user, null, new SoftAuthenticator(origin()).register(reg.options)), 400, "CHALLENGE_NOT_FOUND");
    expect(await sessionsOf(user.id)).toBe(1);
  });

  it("is single-use: a replayed assertion gets CHALLENGE_NOT_FOUND, and of two racing ones exactly one signs in", async () => {
    const { user, authenticator } = await withPasskey();
    const { options, cookie } = await authOptions();
    const assertion = authenticator.assert(options);
    expect((await verifyAuthentication(cookie, assertion)).status).toBe(200);
    expectError(await verifyAuthentication(cookie, assertion), 400, "CHALLENGE_NOT_FOUND");

    const race = await authOptions();
    const raced = authenticator.assert(race.options);
    const answers = await Promise.all([verifyAuthentication(race.cookie, raced), verifyAuthentication(race.cookie, raced)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 400]);
    expect(answers.find((a) => a.status === 400)!.body.code).toBe("CHALLENGE_NOT_FOUND");
    expect(await sessionsOf(user.id)).toBe(3);
  });

  it("a registration challenge does not serve a sign-in, nor the reverse", async () => {
    const { user, authenticator } = await withPasskey();
    const reg = await registerOptions(user);
    expectError(await verifyAuthentication(reg.cookie, authenticator.assert({ challenge: reg.options.challenge, rpId: reg.options.rp.id })), 400, "CHALLENGE_NOT_FOUND");
    const auth = await authOptions(user.token);
    const fresh = new SoftAuthenticator(origin());
    expectError(await verifyRegistration(user, auth.cookie, fresh.register({ challenge: auth.options.challenge, rp: { id: auth.options.rpId } })), 400, "CHALLENGE_NOT_FOUND");
  });

  it("expires after 5 minutes", async () => {
    const { authenticator } = await withPasskey();
    const { options, cookie } = await authOptions();
    server.clock.advance(5 * MINUTE + SECOND);
    expectError(await verifyAuthentication(cookie, authenticator.assert(options)), 400, "CHALLENGE_NOT_FOUND");
  });

  it("a challenge signed by the authenticator must be the one of the cookie", async () => {
    const { authenticator } = await withPasskey();
    const first = await authOptions();
    const second = await authOptions();
    expectError(await verifyAuthentication(second.cookie, authenticator.assert(first.options)), 400, "AUTHENTICATION_FAILED");
  });
});

describe(`passkey refusals (${testDialect})`, () => {
  it("malformed attestations: 400 FAILED_TO_VERIFY_REGISTRATION (never 500); a non-object response: 400 VALIDATION_ERROR", async () => {
    const user = await signUp(server);
    const good = new SoftAuthenticator(origin());
    const broken: unknown[] = [
      {},
      { id: "abc", rawId: "abc", type: "public-key", response: { clientDataJSON: "e30", attestationObject: "AAAA" } },
      { ...good.register({ challenge: "x", rp: { id: "127.0.0.1" } }), type: "password" },
      { id: 1, rawId: [], response: null },
      { id: "a".repeat(5000), rawId: "a".repeat(5000), type: "public-key", response: { clientDataJSON: "a".repeat(9000), attestationObject: "b" } },
    ];
    for (const response of broken) {
      const { cookie } = await registerOptions(user);
      expectError(await verifyRegistration(user, cookie, response), 400, "FAILED_TO_VERIFY_REGISTRATION");
    }
    const { options, cookie } = await registerOptions(user);
    expectError(await verifyRegistration(user, cookie, good.register(options, { origin: "https://evil.example" })), 400, "FAILED_TO_VERIFY_REGISTRATION");
    expectError(await verifyRegistration(user, cookie, "not an object"), 400, "VALIDATION_ERROR");
    expect((await get(`${server.auth}/passkey/list-user-passkeys`, { bearer: user.token })).body).toEqual([]);
  });

  it("options made for one user cannot register a passkey for another: 401 YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY", async () => {
    const alice = await signUp(server);
    const bob = await signUp(server);
    const { options, cookie } = await registerOptions(alice);
    expectError(await verifyRegistration(bob, cookie, new SoftAuthenticator(origin()).register(options)), 401, "YOU_ARE_NOT_ALLOWED_TO_REGISTER_THIS_PASSKEY");
  });

  it("a credential id registered already (to anyone) is a failed registration", async () => {
    const { authenticator } = await withPasskey();
    const other = await signUp(server);
    const { options, cookie } = await registerOptions(other);
    expectError(await verifyRegistration(other, cookie, authenticator.register(options)), 400, "FAILED_TO_VERIFY_REGISTRATION");
  });

  it("an unknown credential: 401 PASSKEY_NOT_FOUND; a foreign origin or RP: 400 AUTHENTICATION_FAILED; no session either way", async () => {
    const { user, authenticator } = await withPasskey();
    const stranger = new SoftAuthenticator(origin());
    expectError(await signInWith(stranger), 401, "PASSKEY_NOT_FOUND");
    const a = await authOptions();
    expectError(await verifyAuthentication(a.cookie, authenticator.assert(a.options, { origin: "https://evil.example" })), 400, "AUTHENTICATION_FAILED");
    const b = await authOptions();
    expectError(await verifyAuthentication(b.cookie, authenticator.assert({ ...b.options, rpId: "evil.example" })), 400, "AUTHENTICATION_FAILED");
    const c = await authOptions();
    expectError(await verifyAuthentication(c.cookie, { id: 42 }), 400, "AUTHENTICATION_FAILED");
    expect(await sessionsOf(user.id)).toBe(1);
  });

  it("a cloned authenticator (counter not above the stored one) is refused, and no session is issued", async () => {
    const { user, authenticator } = await withPasskey({ signCount: 5 });
    const clone = authenticator.clone(5);
    expect((await signInWith(authenticator)).status).toBe(200); // stored counter: 6
    expectError(await signInWith(clone), 400, "AUTHENTICATION_FAILED"); // the clone says 6: not above
    expect(await sessionsOf(user.id)).toBe(2);
  });

  it("two assertions verified against the same stored counter: one session (the counter's compare-and-set)", async () => {
    const { user, authenticator } = await withPasskey({ signCount: 10 });
    const twin = authenticator.clone(10);
    const [a, b] = [await authOptions(), await authOptions()];
    const answers = await Promise.all([verifyAuthentication(a.cookie, authenticator.assert(a.options)), verifyAuthentication(b.cookie, twin.assert(b.options))]);
    expect(answers.map((r) => r.status).sort()).toEqual([200, 400]);
    expect(await sessionsOf(user.id)).toBe(2);
  });

  it("a banned user: 403 BANNED_USER and no session", async () => {
    const { user, authenticator } = await withPasskey();
    expect((await adminPost(server, "ban-user", { userId: user.id }, admin.token)).status).toBe(200);
    expectError(await signInWith(authenticator), 403, "BANNED_USER");
    expect(await sessionsOf(user.id)).toBe(0);
  });

  it("a session older than session.freshAgeSec cannot add a passkey: 403 SESSION_NOT_FRESH", async () => {
    const user = await signUp(server);
    const { options, cookie } = await registerOptions(user);
    server.clock.advance(DAY + SECOND);
    expectError(await get(`${server.auth}/passkey/generate-register-options`, { bearer: user.token }), 403, "SESSION_NOT_FRESH");
    expectError(await verifyRegistration(user, cookie, new SoftAuthenticator(origin()).register(options)), 403, "SESSION_NOT_FRESH");
    // Reading needs no fresh session.
    expect((await get(`${server.auth}/passkey/list-user-passkeys`, { bearer: user.token })).status).toBe(200);
  });
});

describe(`passkey management (${testDialect})`, () => {
  it("renames and deletes your own; someone else's, an unknown or a malformed id all get the same 401 PASSKEY_NOT_FOUND", async () => {
    const { user, passkey } = await withPasskey();
    const other = await withPasskey();
    const renamed = await post(`${server.auth}/passkey/update-passkey`, { id: passkey.id, name: " YubiKey " }, { bearer: user.token });
    expect(renamed.status, renamed.text).toBe(200);
    expect(renamed.body).toEqual({ passkey: { ...passkey, name: "YubiKey" } });
    for (const id of [other.passkey.id, "00000000-0000-4000-8000-000000000000", "not-a-uuid", "'; drop table passkeys; --"]) {
      expectError(await post(`${server.auth}/passkey/update-passkey`, { id, name: "mine" }, { bearer: user.token }), 401, "PASSKEY_NOT_FOUND");
      expectError(await post(`${server.auth}/passkey/delete-passkey`, { id }, { bearer: user.token }), 401, "PASSKEY_NOT_FOUND");
    }
    expect((await get(`${server.auth}/passkey/list-user-passkeys`, { bearer: other.user.token })).body).toEqual([other.passkey]);
    expectError(await post(`${server.auth}/passkey/update-passkey`, { id: passkey.id, name: "  " }, { bearer: user.token }), 400, "VALIDATION_ERROR");
    const deleted = await post(`${server.auth}/passkey/delete-passkey`, { id: passkey.id }, { bearer: user.token });
    expect(deleted.status, deleted.text).toBe(200);
    expect(deleted.body).toEqual({ status: true });
    expect((await get(`${server.auth}/passkey/list-user-passkeys`, { bearer: user.token })).body).toEqual([]);
    expectError(await signInWith(new SoftAuthenticator(origin())), 401, "PASSKEY_NOT_FOUND");
  });

  it("an impersonation session may list, but not register, verify, rename or delete: 403 IMPERSONATION_NOT_ALLOWED", async () => {
    const { user, authenticator, passkey } = await withPasskey();
    const { options, cookie } = await registerOptions(user);
    const start = await adminPost(server, "impersonate-user", { userId: user.id }, admin.token);
    expect(start.status, start.text).toBe(200);
    const bearer = start.body.session.token as string;
    expect((await get(`${server.auth}/passkey/list-user-passkeys`, { bearer })).body).toEqual([passkey]);
    expectError(await get(`${server.auth}/passkey/generate-register-options`, { bearer }), 403, "IMPERSONATION_NOT_ALLOWED");
    const response = new SoftAuthenticator(origin()).register(options);
    expectError(await post(`${server.auth}/passkey/verify-registration`, { response }, { bearer, cookie }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await post(`${server.auth}/passkey/update-passkey`, { id: passkey.id, name: "x" }, { bearer }), 403, "IMPERSONATION_NOT_ALLOWED");
    expectError(await post(`${server.auth}/passkey/delete-passkey`, { id: passkey.id }, { bearer }), 403, "IMPERSONATION_NOT_ALLOWED");
    expect((await signInWith(authenticator)).status).toBe(200);
  });

  it("the tRPC forms: same shapes, same codes", async () => {
    const { user, passkey } = await withPasskey();
    const list = await get(`${server.url}/api/trpc/passkey.listUserPasskeys`, { bearer: user.token });
    expect(list.status, list.text).toBe(200);
    expect(list.body.result.data).toEqual([passkey]);
    const options = await get(`${server.url}/api/trpc/passkey.generateAuthenticateOptions`);
    expect(options.body.result.data.challenge).toEqual(expect.any(String));
    expect(challengeCookie(options)).toBeTruthy();
    const refused = await post(`${server.url}/api/trpc/passkey.verifyAuthentication`, { response: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error.data.authCode).toBe("CHALLENGE_NOT_FOUND");
  });
});

describe(`passkey module off (${testDialect})`, () => {
  it("every passkey route and procedure answers 404 NOT_FOUND, signed in or not", async () => {
    const user = await signUp(off);
    const passkeyRoutes = routes.filter((r) => r.path.startsWith("/passkey/"));
    expect(passkeyRoutes).toHaveLength(8);
    for (const route of passkeyRoutes) {
      for (const bearer of [undefined, user.token]) {
        const res = await request(route.method, `${off.auth}${route.path}`, { ...(bearer ? { bearer } : {}), ...(route.method === "POST" ? { json: { id: "x", name: "y", response: {} } } : {}) });
        expectError(res, 404, "NOT_FOUND");
      }
      const trpc = await request(route.method, `${off.url}/api/trpc/${route.procedure}`, { bearer: user.token, ...(route.method === "POST" ? { json: {} } : {}) });
      expect(trpc.status, `${route.procedure}: ${trpc.text}`).toBe(404);
      expect(trpc.body.error.data.authCode).toBe("NOT_FOUND");
    }
  });
});

describe(`a squatter's passkey (${testDialect})`, () => {
  it("dies with the password reset of the unverified account: the owner's reset signs the squatter's authenticator out for good", async () => {
    const { startSmtpSink, linkFrom, onServer } = await import("../../harness/smtp.ts");
    const sink = await startSmtpSink();
    const mailed = await startTestServer({ email: { smtpUrl: sink.url } }, { ownOrigin: true, publicHost: "localhost" });
    try {
      const squatter = await signUp(mailed);
      const authenticator = new SoftAuthenticator(mailed.portcullis.app.origin);
      const options = await get(`${mailed.auth}/passkey/generate-register-options`, { bearer: squatter.token });
      const registered = await post(`${mailed.auth}/passkey/verify-registration`, { response: authenticator.register(options.body) }, { bearer: squatter.token, cookie: challengeCookie(options)!, headers: { origin: mailed.portcullis.app.origin } });
      expect(registered.status, registered.text).toBe(200);

      const passkeySignIn = async () => {
        const auth = await get(`${mailed.auth}/passkey/generate-authenticate-options`);
        return post(`${mailed.auth}/passkey/verify-authentication`, { response: authenticator.assert(auth.body) }, { cookie: challengeCookie(auth)!, headers: { origin: mailed.portcullis.app.origin } });
      };
      expect((await passkeySignIn()).status).toBe(200);

      await post(`${mailed.auth}/request-password-reset`, { email: squatter.email });
      const mail = await sink.waitFor((m) => m.to.includes(squatter.email) && m.subject === "Reset your password");
      const token = new URL(onServer(linkFrom(mail, "/reset-password/"), mailed.url)).pathname.split("/").pop()!;
      expect((await post(`${mailed.auth}/reset-password`, { token, newPassword: "the owner's password" })).status).toBe(200);

      expectError(await passkeySignIn(), 401, "PASSKEY_NOT_FOUND");
    } finally {
      await mailed.close();
      await sink.close();
    }
  });
});
