/**
 * An app's own sign-in page (`oidcProvider.loginPage`) with better-auth's oauth-provider wire:
 * the sign-in body carries the signed `oauth_query`, and the call that hands over a session
 * answers where the authorize request goes next (docs/oidc-provider.md "Pages").
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { totpCode } from "../../../src/modules/two-factor/totp.ts";
import { cookieFrom, post, request, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { authorizeUrl, pkce, REDIRECT, registerClient, signUp } from "./helpers.ts";

const LOGIN_PAGE = "https://app.example.test/login";
const mails: Array<{ kind: string; to: string; code?: string | undefined }> = [];
let server: TestServer;
let rp: { clientId: string; clientSecret: string | null };
let origin: string;

beforeAll(async () => {
  server = await startTestServer({ oidcProvider: { loginPage: LOGIN_PAGE }, email: { send: (m) => void mails.push({ kind: m.kind, to: m.to, code: m.code }) } }, { ownOrigin: true });
  origin = new URL(server.url).origin;
  rp = await registerClient(server, { skipConsent: true });
});
afterAll(async () => {
  await server.close();
});

/** An authorize request without a session: the oauth_query the app's sign-in page receives. */
async function oauthQuery(): Promise<string> {
  const p = pkce();
  const url = authorizeUrl(server, { response_type: "code", client_id: rp.clientId, redirect_uri: REDIRECT, scope: "openid", state: "s1", code_challenge: p.challenge, code_challenge_method: "S256" });
  const res = await request("GET", url, { headers: { accept: "text/html" } });
  expect(res.status).toBe(302);
  const login = new URL(res.headers.get("location")!);
  expect(login.origin + login.pathname).toBe(LOGIN_PAGE);
  return login.search.slice(1);
}

const send = (path: string, body: Record<string, unknown>, cookie?: string) => post(`${server.auth}${path}`, body, { headers: { origin, ...(cookie ? { cookie } : {}) } });

function expectCode(res: { status: number; text: string; body: { redirect?: boolean; url?: string } }) {
  expect(res.status, res.text).toBe(200);
  expect(res.body.redirect).toBe(true);
  const callback = new URL(res.body.url!);
  expect(callback.origin + callback.pathname).toBe(REDIRECT);
  expect(callback.searchParams.get("code")).toEqual(expect.any(String));
  expect(callback.searchParams.get("state")).toBe("s1");
}

describe("sign-in with oauth_query", () => {
  it("email and password: the session is set and the answer is the authorize request's redirect", async () => {
    const { email } = await signUp(server);
    const res = await send("/sign-in/email", { email, password: "password123", oauth_query: await oauthQuery() });
    expectCode(res);
    expect(cookieFrom(res.headers)).not.toBeNull();
  });

  it("a forged oauth_query is refused before the sign-in (no session)", async () => {
    const { email } = await signUp(server);
    const forged = (await oauthQuery()).replace("state=s1", "state=s2");
    const res = await send("/sign-in/email", { email, password: "password123", oauth_query: forged });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe("INVALID_OAUTH_QUERY");
    expect(cookieFrom(res.headers)).toBeNull();
  });

  it("without oauth_query the sign-in answers as always", async () => {
    const { email } = await signUp(server);
    const res = await send("/sign-in/email", { email, password: "password123" });
    expect(res.status).toBe(200);
    expect(res.body.redirect).toBe(false);
    expect(res.body.user.email).toBe(email);
  });

  it("a mailed code (email-otp) continues the same way", async () => {
    const { email } = await signUp(server);
    expect((await send("/email-otp/send-verification-otp", { email, type: "sign-in" })).status).toBe(200);
    await expect.poll(() => mails.find((m) => m.to === email && m.code)).toBeTruthy();
    const code = mails.find((m) => m.to === email && m.code)!.code!;
    expectCode(await send("/sign-in/email-otp", { email, otp: code, oauth_query: await oauthQuery() }));
  });

  it("two-factor: the pending sign-in answers as always; the second step that issues the session continues", async () => {
    const email = uniqueEmail("cont");
    const up = await send("/sign-up/email", { name: "Ada", email, password: "password123" });
    const cookie = cookieFrom(up.headers)!;
    const enabled = await send("/two-factor/enable", { password: "password123" }, cookie);
    const secret = new URL(enabled.body.totpURI).searchParams.get("secret")!;
    expect((await send("/two-factor/verify-totp", { code: totpCode(secret, server.clock.now().getTime()) }, cookie)).status).toBe(200);
    const query = await oauthQuery();
    const first = await send("/sign-in/email", { email, password: "password123", oauth_query: query });
    expect(first.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["totp", "otp"] });
    server.clock.advance(30_000);
    const pending = cookieFrom(first.headers, "portcullis.two_factor")!;
    expectCode(await send("/two-factor/verify-totp", { code: totpCode(secret, server.clock.now().getTime()), oauth_query: query }, pending));
  });
});
