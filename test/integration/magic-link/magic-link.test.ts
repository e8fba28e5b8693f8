import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256 } from "../../../src/crypto/tokens.ts";
import { Account, AuditEvent, Session, User, Verification } from "../../../src/db/entities/index.ts";
import { adminPost, bootstrapAdmin, PASSWORD, signUp } from "../../harness/admin-helpers.ts";
import { MINUTE, SECOND } from "../../harness/clock.ts";
import { cookieFrom, get, post, request, uniqueEmail } from "../../harness/http.ts";
import { startTestServer, type TestServer } from "../../harness/server.ts";
import { linkFrom, onServer, startSmtpSink, type SmtpSink } from "../../harness/smtp.ts";

/**
 * Magic links (docs/passwordless.md) over real HTTP and real SMTP: better-auth's
 * /sign-in/magic-link and /magic-link/verify, with the confirm page a browser gets.
 */
const PUBLIC = "http://127.0.0.1:3000";
const APP = "http://app.example.test";
const BROWSER = { accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8" };

let sink: SmtpSink;
let server: TestServer;

beforeAll(async () => {
  sink = await startSmtpSink();
  server = await startTestServer({ email: { smtpUrl: sink.url }, trustedOrigins: [APP] });
});
afterAll(async () => {
  await server?.close();
  await sink?.close();
});

/** Asks for a link and returns it (pointed at the test server) with its token. */
async function mailedLink(s: TestServer, email: string, body: Record<string, unknown> = {}) {
  const before = sink.to(email).length;
  const res = await post(`${s.auth}/sign-in/magic-link`, { email, ...body });
  expect(res.status, res.text).toBe(200);
  expect(res.body).toEqual({ status: true });
  await sink.waitFor(() => sink.to(email).length > before);
  const mail = sink.to(email)[before]!;
  const link = linkFrom(mail, "/magic-link/verify");
  return { mail, link, url: onServer(link, s.url), token: new URL(link).searchParams.get("token")! };
}

const formPost = (url: string, fields: Record<string, string>, headers: Record<string, string> = {}) =>
  request("POST", url, { raw: new URLSearchParams(fields).toString(), headers: { "content-type": "application/x-www-form-urlencoded", ...headers } });

describe("magic link: request and verify", () => {
  it("mails a link; the SDK's GET signs in (JSON: token, user, session), creating the account; the token is stored as SHA-256", async () => {
    const email = uniqueEmail("ml-new");
    const { mail, link, url, token } = await mailedLink(server, email, { name: "Mags" });
    expect(mail.subject).toBe("Your sign-in link");
    const parsed = new URL(link);
    expect(`${parsed.origin}${parsed.pathname}`).toBe(`${PUBLIC}/api/auth/magic-link/verify`);
    expect(Buffer.from(token, "base64url").length).toBe(32);
    const rows = await server.portcullis.app.orm.em.fork().find(Verification, { purpose: "magic-link" });
    expect(rows.map((r) => r.identifier)).toContain(sha256(token));
    expect(JSON.stringify(rows)).not.toContain(token);

    const res = await get(url);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ email, name: "Mags", emailVerified: true });
    expect(res.body.session).toMatchObject({ userId: res.body.user.id, token: res.body.token });
    expect(res.headers.get("set-auth-token")).toBe(res.body.token);
    expect(cookieFrom(res.headers)).toContain(res.body.token);
    const session = await get(`${server.auth}/get-session`, { bearer: res.body.token });
    expect(session.body.user.email).toBe(email);

    const audit = await server.portcullis.app.orm.em.fork().find(AuditEvent, { action: "magic-link-sign-in", targetId: res.body.user.id });
    expect(audit.map((a) => JSON.parse(a.metadata!))).toEqual([{ newUser: true }]);
  });

  it("the link used twice: the second use is 400 INVALID_TOKEN, or a redirect to the error callback", async () => {
    const email = uniqueEmail("ml-twice");
    const { url } = await mailedLink(server, email, { errorCallbackURL: "/oops" });
    const plain = url.replace(/&errorCallbackURL=[^&]*/, "");
    expect((await get(plain)).status).toBe(200);
    const again = await get(plain);
    expect(again.status).toBe(400);
    expect(again.body.code).toBe("INVALID_TOKEN");
    const redirected = await get(url);
    expect(redirected.status).toBe(302);
    expect(redirected.headers.get("location")).toBe(`${PUBLIC}/oops?error=INVALID_TOKEN`);
    expect(cookieFrom(redirected.headers)).toBeNull();
  });

  it("an expired link (5 minutes) is INVALID_TOKEN; one second before, it works", async () => {
    const email = uniqueEmail("ml-expired");
    const first = await mailedLink(server, email);
    const second = await mailedLink(server, email);
    server.clock.advance(5 * MINUTE - SECOND);
    expect((await get(first.url)).status).toBe(200);
    server.clock.advance(2 * SECOND);
    const late = await get(second.url);
    expect(late.status).toBe(400);
    expect(late.body.code).toBe("INVALID_TOKEN");
  });

  it("callbacks: existing users go to callbackURL, new ones to newUserCallbackURL, with the session cookie and no body", async () => {
    const fresh = uniqueEmail("ml-cb");
    const callbacks = { callbackURL: `${APP}/home`, newUserCallbackURL: "/welcome" };
    const first = await get((await mailedLink(server, fresh, callbacks)).url);
    expect(first.status).toBe(302);
    expect(first.headers.get("location")).toBe(`${PUBLIC}/welcome`);
    expect(cookieFrom(first.headers)).not.toBeNull();
    expect(first.text).toBe("");
    const again = await get((await mailedLink(server, fresh, callbacks)).url);
    expect(again.headers.get("location")).toBe(`${APP}/home`);
  });

  it("another callbackURL origin: refused when asking (403 INVALID_CALLBACK_URL, no mail) and when opening a link edited to carry one", async () => {
    const email = uniqueEmail("ml-foreign");
    for (const field of ["callbackURL", "newUserCallbackURL", "errorCallbackURL"]) {
      const res = await post(`${server.auth}/sign-in/magic-link`, { email, [field]: "https://evil.example/steal" });
      expect(res.status, field).toBe(403);
      expect(res.body.code).toBe("INVALID_CALLBACK_URL");
    }
    await server.portcullis.app.mailer.settle();
    expect(sink.to(email)).toHaveLength(0);

    const { url } = await mailedLink(server, email);
    for (const field of ["callbackURL", "newUserCallbackURL", "errorCallbackURL"]) {
      const edited = await get(`${url}&${field}=${encodeURIComponent("https://evil.example/steal")}`);
      expect(edited.status, field).toBe(403);
      expect(edited.body.code).toBe("INVALID_CALLBACK_URL");
    }
    // Refused before use: the link still works.
    expect((await get(url)).status).toBe(200);
  });

  it("bad input is a 4xx, never a 5xx: a literal %, a missing or huge token, a malformed email", async () => {
    for (const query of ["token=%25", "token=abc&callbackURL=%25", "token=%E0%A4%A", "", `token=${"a".repeat(600)}`, "token=x&callbackURL=%2F%2Fevil.example"]) {
      const res = await get(`${server.auth}/magic-link/verify?${query}`);
      expect(res.status, query).toBeGreaterThanOrEqual(400);
      expect(res.status, query).toBeLessThan(500);
    }
    for (const body of [{ email: "not-an-email" }, { email: 42 }, {}, { email: "a@b.example", name: "x".repeat(2000) }, { email: "a@b.example", metadata: "x" }]) {
      const res = await post(`${server.auth}/sign-in/magic-link`, body);
      expect(res.status, JSON.stringify(body)).toBe(400);
    }
  });
});

describe("magic link: the confirm page (mail scanners)", () => {
  it("a browser's GET (Accept: text/html) shows a script-free form and does not sign in; its POST does, then redirects", async () => {
    const email = uniqueEmail("ml-page");
    const { url, token } = await mailedLink(server, email, { callbackURL: `${APP}/dashboard` });
    for (let i = 0; i < 2; i++) {
      const page = await get(url, { headers: BROWSER });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      const csp = page.headers.get("content-security-policy")!;
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain(`form-action 'self' ${PUBLIC} ${APP}`);
      expect(csp).toContain("frame-ancestors 'none'");
      // same-origin: the page's URL (the token) goes to no one else, and the form's POST still carries our Origin.
      expect(page.headers.get("referrer-policy")).toBe("same-origin");
      expect(page.headers.get("set-cookie")).toBeNull();
      expect(page.text).not.toMatch(/<script/i);
      expect(page.text).toContain(`<form method="post" action="/api/auth/magic-link/verify">`);
      expect(page.text).toContain(`name="token" value="${token}"`);
      expect(page.text).toContain(email);
    }
    expect(await server.portcullis.app.orm.em.fork().count(User, { email })).toBe(0);

    const done = await formPost(`${server.auth}/magic-link/verify`, { token, callbackURL: `${APP}/dashboard` }, { origin: PUBLIC, "sec-fetch-site": "same-origin" });
    expect(done.status, done.text).toBe(302);
    expect(done.headers.get("location")).toBe(`${APP}/dashboard`);
    const cookie = cookieFrom(done.headers)!;
    expect((await get(`${server.auth}/get-session`, { cookie })).body.user.email).toBe(email);
    // Used: the page now sends the browser to the callback with the error.
    const dead = await get(url, { headers: BROWSER });
    expect(dead.status).toBe(302);
    expect(dead.headers.get("location")).toBe(`${APP}/dashboard?error=INVALID_TOKEN`);
  });

  it("the page escapes what the link carries: a callbackURL with markup stays an attribute value, and the form posts it back as it came", async () => {
    const email = uniqueEmail("ml-escape");
    const hostile = `/in?x="><script>alert(1)</script><img src=x onerror=alert(2)>&y='`;
    const { url, token } = await mailedLink(server, email, { callbackURL: hostile });
    const page = await get(url, { headers: BROWSER });
    expect(page.status).toBe(200);
    expect(page.text).not.toMatch(/<script|<img/i);
    expect(page.text).toContain(`name="callbackURL" value="/in?x=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&amp;y=&#39;"`);
    const done = await formPost(`${server.auth}/magic-link/verify`, { token, callbackURL: hostile }, { origin: PUBLIC });
    expect(done.status, done.text).toBe(302);
    expect(new URL(done.headers.get("location")!).pathname).toBe("/in");
  });

  it("a dead link without callbacks sends a browser to the error page; a program gets JSON", async () => {
    const url = `${server.auth}/magic-link/verify?token=${"x".repeat(43)}`;
    const browser = await get(url, { headers: BROWSER });
    expect(browser.status).toBe(302);
    expect(browser.headers.get("location")).toBe(`${PUBLIC}/api/auth/error?error=INVALID_TOKEN`);
    const program = await get(url);
    expect(program.status).toBe(400);
    expect(program.body.code).toBe("INVALID_TOKEN");
  });

  it("the form post from a foreign page is refused (login CSRF), and the link stays usable", async () => {
    const email = uniqueEmail("ml-csrf");
    const { url, token } = await mailedLink(server, email);
    const res = await formPost(`${server.auth}/magic-link/verify`, { token }, { origin: "https://evil.example", "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate" });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("INVALID_ORIGIN");
    expect((await get(url)).status).toBe(200);
  });

  it("confirmPage: false gives better-auth's one-click GET", async () => {
    const oneClick = await startTestServer({ email: { smtpUrl: sink.url }, magicLink: { confirmPage: false } });
    try {
      const email = uniqueEmail("ml-oneclick");
      const { url } = await mailedLink(oneClick, email, { callbackURL: "/in" });
      const res = await get(url, { headers: BROWSER });
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`${PUBLIC}/in`);
      expect(cookieFrom(res.headers)).not.toBeNull();
    } finally {
      await oneClick.close();
    }
  });
});

describe("magic link: accounts and access", () => {
  it("an unverified account is taken over: the squatter's password and sessions go, the address becomes verified", async () => {
    const squatter = await signUp(server, { email: uniqueEmail("ml-squat") });
    const { url } = await mailedLink(server, squatter.email);
    const res = await get(url);
    expect(res.status, res.text).toBe(200);
    expect(res.body.user).toMatchObject({ id: squatter.id, emailVerified: true });
    expect((await get(`${server.auth}/get-session`, { bearer: squatter.token })).body).toBeNull();
    const em = server.portcullis.app.orm.em.fork();
    expect(await em.count(Account, { user: squatter.id })).toBe(0);
    expect(await em.count(Session, { user: squatter.id })).toBe(1);
    expect((await post(`${server.auth}/sign-in/email`, { email: squatter.email, password: PASSWORD })).status).toBe(401);
    const audit = await em.findOneOrFail(AuditEvent, { action: "magic-link-sign-in", targetId: squatter.id });
    expect(JSON.parse(audit.metadata!)).toEqual({ newUser: false, unprovenAccessRemoved: true });
  });

  it("a verified account keeps its password and sessions", async () => {
    const owner = await signUp(server, { email: uniqueEmail("ml-owner") });
    await server.portcullis.app.orm.em.fork().nativeUpdate(User, { id: owner.id }, { emailVerified: true });
    expect((await get((await mailedLink(server, owner.email)).url)).status).toBe(200);
    expect((await get(`${server.auth}/get-session`, { bearer: owner.token })).body.user.id).toBe(owner.id);
    expect((await post(`${server.auth}/sign-in/email`, { email: owner.email, password: PASSWORD })).status).toBe(200);
  });

  it("disableSignUp: an address without an account gets no link; a link of a deleted account is new_user_signup_disabled", async () => {
    const closed = await startTestServer({ email: { smtpUrl: sink.url }, magicLink: { disableSignUp: true }, user: { deleteUser: { enabled: true } } });
    try {
      const stranger = uniqueEmail("ml-stranger");
      expect((await post(`${closed.auth}/sign-in/magic-link`, { email: stranger })).body).toEqual({ status: true });
      await closed.portcullis.app.mailer.settle();
      expect(sink.to(stranger)).toHaveLength(0);

      const member = await signUp(closed, { email: uniqueEmail("ml-member") });
      const { url } = await mailedLink(closed, member.email, { errorCallbackURL: "/bad" });
      expect((await post(`${closed.auth}/delete-user`, { password: PASSWORD }, { bearer: member.token })).status).toBe(200);
      const res = await get(url);
      expect(res.status).toBe(302);
      expect(res.headers.get("location")).toBe(`${PUBLIC}/bad?error=new_user_signup_disabled`);
      const json = await get(url.replace(/&errorCallbackURL=[^&]*/, ""));
      expect(json.status).toBe(403);
      expect(json.body.code).toBe("NEW_USER_SIGNUP_DISABLED");
    } finally {
      await closed.close();
    }
  });

  it("a banned user gets 403 BANNED_USER and no session", async () => {
    const admin = await bootstrapAdmin(server);
    const user = await signUp(server, { email: uniqueEmail("ml-banned") });
    const { url } = await mailedLink(server, user.email);
    expect((await adminPost(server, "ban-user", { userId: user.id }, admin.token)).status).toBe(200);
    const res = await get(url);
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("BANNED_USER");
    expect(cookieFrom(res.headers)).toBeNull();
  });

  it("an impersonation session can neither ask for a link nor use one", async () => {
    const admin = await bootstrapAdmin(server);
    const target = await signUp(server, { email: uniqueEmail("ml-imp") });
    const start = await adminPost(server, "impersonate-user", { userId: target.id }, admin.token);
    const imp = start.headers.get("set-auth-token")!;
    const ask = await post(`${server.auth}/sign-in/magic-link`, { email: target.email }, { bearer: imp });
    expect(ask.status).toBe(403);
    expect(ask.body.code).toBe("IMPERSONATION_NOT_ALLOWED");
    const { url } = await mailedLink(server, target.email);
    const use = await get(url, { bearer: imp });
    expect(use.status).toBe(403);
    expect(use.body.code).toBe("IMPERSONATION_NOT_ALLOWED");
    expect((await get(url)).status).toBe(200);
  });

  it("two-factor still applies (twoFactorRedirect and the pending cookie), unless twoFactor.skipForPasswordless", async () => {
    for (const skip of [false, true]) {
      const s = await startTestServer({ email: { smtpUrl: sink.url }, twoFactor: { skipForPasswordless: skip } });
      try {
        const user = await signUp(s, { email: uniqueEmail("ml-2fa") });
        await s.portcullis.app.orm.em.fork().nativeUpdate(User, { id: user.id }, { emailVerified: true, twoFactorEnabled: true });
        const json = await get((await mailedLink(s, user.email)).url);
        const redirected = await get((await mailedLink(s, user.email, { callbackURL: "/in" })).url);
        if (skip) {
          expect(json.body.token).toEqual(expect.any(String));
          expect(redirected.headers.get("location")).toBe(`${PUBLIC}/in`);
          continue;
        }
        expect(json.status).toBe(200);
        expect(json.body).toEqual({ twoFactorRedirect: true, twoFactorMethods: ["otp"] });
        expect(cookieFrom(json.headers, "portcullis.two_factor")).not.toBeNull();
        expect(json.headers.get("set-auth-token")).toBeNull();
        expect(redirected.headers.get("location")).toBe(`${PUBLIC}/in?twoFactorRedirect=true`);
        expect(cookieFrom(redirected.headers)).toBe("portcullis.session_token=");
      } finally {
        await s.close();
      }
    }
  });

  it("off (magicLink.enabled: false): every route is 404", async () => {
    const off = await startTestServer({ magicLink: { enabled: false } });
    try {
      expect((await post(`${off.auth}/sign-in/magic-link`, { email: uniqueEmail("x") })).status).toBe(404);
      expect((await get(`${off.auth}/magic-link/verify?token=abc`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe("passwordless mail: the send hook and templates", () => {
  it("magicLink and emailOtp kinds reach email.send with url, metadata, code, otpType and the locale; templates write them", async () => {
    const sent: Array<Record<string, unknown>> = [];
    const s = await startTestServer({
      email: {
        send: (mail) => void sent.push({ ...mail }),
        templates: {
          magicLink: ({ url, metadata, locale }) => ({ subject: `Anmelden (${locale})`, text: `${url} ${JSON.stringify(metadata)}` }),
          emailOtp: ({ code, otpType, locales }) => ({ subject: `Code ${otpType}`, text: `${code} ${locales.join(",")}` }),
        },
      },
    });
    try {
      const email = uniqueEmail("ml-hook");
      const headers = { "accept-language": "de-CH, de;q=0.9, en;q=0.5" };
      expect((await post(`${s.auth}/sign-in/magic-link`, { email, metadata: { plan: "pro" } }, { headers })).status).toBe(200);
      expect((await post(`${s.auth}/email-otp/send-verification-otp`, { email, type: "sign-in" }, { headers })).status).toBe(200);
      await s.portcullis.app.mailer.settle();
      // Mail leaves after the answer (the same timing for known and unknown addresses), so the two
      // sends may reach the hook in either order: find each by its kind.
      expect(sent).toHaveLength(2);
      const link = sent.find((m) => m.kind === "magicLink");
      const code = sent.find((m) => m.kind === "emailOtp");
      expect(link).toMatchObject({ kind: "magicLink", to: email, subject: "Anmelden (de-CH)", metadata: { plan: "pro" }, locale: "de-CH" });
      expect(String(link!.text)).toContain(`${String(link!.url)} {"plan":"pro"}`);
      expect(code).toMatchObject({ kind: "emailOtp", to: email, subject: "Code sign-in", otpType: "sign-in", code: expect.stringMatching(/^\d{6}$/) });
      expect(code!.text).toBe(`${String(code!.code)} de-CH,de,en`);
    } finally {
      await s.close();
    }
  });
});

describe("passwordless sign-in outcomes in the metrics", () => {
  it("counts /magic-link/verify and /sign-in/email-otp by outcome: a redirected failure under its code, the confirm page not at all", async () => {
    const s = await startTestServer({ email: { smtpUrl: sink.url }, metrics: { enabled: true } });
    const attempts = async (route: string, outcome: string) => {
      const text = await (await fetch(`${s.url}/metrics`)).text();
      const line = text.split("\n").find((l) => l.startsWith(`portcullis_sign_in_attempts_total{route="${route}",outcome="${outcome}"}`));
      return line ? Number(line.split(" ").at(-1)) : 0;
    };
    try {
      const email = uniqueEmail("ml-metrics");
      const { url, token } = await mailedLink(s, email, { callbackURL: "/in" });
      expect((await get(url, { headers: BROWSER })).status).toBe(200); // the page: no outcome yet
      expect((await formPost(`${s.auth}/magic-link/verify`, { token, callbackURL: "/in" }, { origin: PUBLIC })).status).toBe(302);
      expect((await get(url)).headers.get("location")).toBe(`${PUBLIC}/in?error=INVALID_TOKEN`);
      expect(await attempts("/magic-link/verify", "success")).toBe(1);
      expect(await attempts("/magic-link/verify", "INVALID_TOKEN")).toBe(1);

      expect((await post(`${s.auth}/sign-in/email-otp`, { email, otp: "123456" })).status).toBe(400);
      expect(await attempts("/sign-in/email-otp", "INVALID_OTP")).toBe(1);
    } finally {
      await s.close();
    }
  });
});
